package main

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// archived is one file of an archive: its name inside the archive's directory, where it is
// read from, and its mode.
type archived struct {
	name, path string
	mode       os.FileMode
}

// pack writes files into the archive at dst (.zip, else .tar.gz), under the directory dir,
// sorted by name, every entry with mtime, no owner, and its mode: nothing of the machine or the
// moment goes in, so the same files give the same bytes.
func pack(dst, dir string, files []archived, mtime time.Time) error {
	files = slices.Clone(files)
	slices.SortFunc(files, func(a, b archived) int { return strings.Compare(a.name, b.name) })
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	if strings.HasSuffix(dst, ".zip") {
		err = packZip(f, dir, files, mtime)
	} else {
		err = packTarGz(f, dir, files, mtime)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
	}
	return err
}

func packTarGz(w io.Writer, dir string, files []archived, mtime time.Time) error {
	// No name, no time, no OS: what `gzip -n` leaves out (the header's OS byte is Go's
	// constant "unknown").
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	hdr := func(name string, mode os.FileMode, size int64, typ byte) *tar.Header {
		return &tar.Header{Typeflag: typ, Name: name, Mode: int64(mode.Perm()), Size: size, ModTime: mtime,
			Format: tar.FormatPAX, Uid: 0, Gid: 0}
	}
	if err := tw.WriteHeader(hdr(dir+"/", 0o755, 0, tar.TypeDir)); err != nil {
		return err
	}
	for _, f := range files {
		if err := copyInto(f, func(size int64) (io.Writer, error) {
			return tw, tw.WriteHeader(hdr(path.Join(dir, f.name), f.mode, size, tar.TypeReg))
		}); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func packZip(w io.Writer, dir string, files []archived, mtime time.Time) error {
	zw := zip.NewWriter(w)
	dh := &zip.FileHeader{Name: dir + "/", Modified: mtime}
	dh.SetMode(os.ModeDir | 0o755)
	if _, err := zw.CreateHeader(dh); err != nil {
		return err
	}
	for _, f := range files {
		if err := copyInto(f, func(int64) (io.Writer, error) {
			h := &zip.FileHeader{Name: path.Join(dir, f.name), Method: zip.Deflate, Modified: mtime}
			h.SetMode(f.mode)
			return zw.CreateHeader(h)
		}); err != nil {
			return err
		}
	}
	return zw.Close()
}

// copyInto copies f's content into the writer open returns, given f's size.
func copyInto(f archived, open func(size int64) (io.Writer, error)) error {
	src, err := os.Open(f.path)
	if err != nil {
		return err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return err
	}
	w, err := open(st.Size())
	if err != nil {
		return err
	}
	_, err = io.Copy(w, src)
	return err
}
