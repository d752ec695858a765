package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestReleaseReproducible builds and archives the host's target twice, as make dist does all
// six: the two SHA256SUMS are the same bytes, the archive holds the binary, README.md and
// LICENSE, and the binary says the version stamped into it.
func TestReleaseReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice; skipped with -short")
	}
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	const version = "v9.8.7-test.1"
	target := runtime.GOOS + "/" + runtime.GOARCH
	var sums [2][]byte
	outs := [2]string{t.TempDir(), t.TempDir()}
	for i, out := range outs {
		o := options{root: root, version: version, out: out, targets: []string{target}, work: t.TempDir()}
		if err := run(ctx, o, t.Logf); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
		if sums[i], err = os.ReadFile(filepath.Join(out, "SHA256SUMS")); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(sums[0], sums[1]) {
		t.Fatalf("two runs, two SHA256SUMS:\n%s\n%s", sums[0], sums[1])
	}
	dir := "letterbox_" + version + "_" + runtime.GOOS + "_" + runtime.GOARCH
	archive := dir + ".tar.gz"
	if runtime.GOOS == "windows" {
		archive = dir + ".zip"
	}
	if fields := strings.Fields(string(sums[0])); len(fields) != 2 || fields[1] != archive || len(fields[0]) != 64 {
		t.Errorf("SHA256SUMS: %q, want one line: the hash, two spaces, %s", sums[0], archive)
	}

	files := unpack(t, filepath.Join(outs[0], archive))
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	bin := dir + "/" + binaryName(runtime.GOOS)
	if want := []string{dir + "/LICENSE", dir + "/README.md", bin}; !slices.Equal(names, want) {
		t.Fatalf("the archive holds %q, want %q", names, want)
	}
	for _, extra := range extras {
		want, err := os.ReadFile(filepath.Join(root, extra))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(files[dir+"/"+extra], want) {
			t.Errorf("the archive's %s is not the repository's", extra)
		}
	}
	exe := filepath.Join(t.TempDir(), binaryName(runtime.GOOS))
	if err := os.WriteFile(exe, files[bin], 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, exe, "version").Output()
	if err != nil {
		t.Fatalf("letterbox version: %v", err)
	}
	if !strings.HasPrefix(string(out), "letterbox "+version+" (") {
		t.Errorf("letterbox version of a build stamped %s: %q", version, out)
	}
}

// unpack reads a .tar.gz or .zip archive into a map from names to contents (directories
// left out).
func unpack(t *testing.T, path string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			if strings.HasSuffix(f.Name, "/") {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			out[f.Name] = b
		}
		return out
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("the gzip header carries a name %q or a time %v", gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: owned by %d/%d %q/%q", h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		if h.Typeflag == tar.TypeDir {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = b
	}
}

func TestPackIsDeterministic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []string{"b", "a"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("content of "+n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	files := []archived{{name: "b", path: filepath.Join(dir, "b"), mode: 0o644}, {name: "a", path: filepath.Join(dir, "a"), mode: 0o755}}
	mtime := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, ext := range []string{".tar.gz", ".zip"} {
		var got [2][]byte
		for i := range got {
			dst := filepath.Join(t.TempDir(), "x"+ext)
			// The files' own times differ between the runs; they must not show.
			now := time.Now().Add(time.Duration(i) * time.Hour)
			for _, f := range files {
				if err := os.Chtimes(f.path, now, now); err != nil {
					t.Fatal(err)
				}
			}
			if err := pack(dst, "d", files, mtime); err != nil {
				t.Fatal(err)
			}
			var err error
			if got[i], err = os.ReadFile(dst); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got[0], got[1]) {
			t.Errorf("%s: the same files packed twice differ", ext)
		}
	}
}
