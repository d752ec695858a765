package storage

import (
	"io"
	"os"
	"testing"
)

// memFile is a File in memory, for scanning arbitrary bytes.
type memFile struct{ b []byte }

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(f.b)) {
		return 0, io.EOF
	}
	n := copy(p, f.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if need := off + int64(len(p)); need > int64(len(f.b)) {
		f.b = append(f.b, make([]byte, need-int64(len(f.b)))...)
	}
	return copy(f.b[off:], p), nil
}

func (f *memFile) Sync() error               { return nil }
func (f *memFile) Truncate(size int64) error { f.b = f.b[:size]; return nil }
func (f *memFile) Size() (int64, error)      { return int64(len(f.b)), nil }
func (f *memFile) Name() string              { return "mem" }
func (f *memFile) Close() error              { return nil }

// memFS opens its one memFile whatever the name, so that a segment can be opened through a
// fileCache over it.
type memFS struct{ f *memFile }

func (m memFS) OpenFile(string, int, os.FileMode) (File, error) { return m.f, nil }
func (memFS) Remove(string) error                               { return nil }
func (memFS) Rename(string, string) error                       { return nil }
func (memFS) SyncDir(string) error                              { return nil }

// FuzzSegmentScan feeds arbitrary bytes after a valid header to recovery's scan: it must not
// panic, and whatever it indexes must decode, in order, within the file.
func FuzzSegmentScan(f *testing.F) {
	var body []byte
	for i := range 5 {
		body = appendRecord(body, recordSeed(7), int64(i), ptr(testMeta(i)), testData(i))
	}
	f.Add(body)
	f.Add(body[:len(body)-3])
	f.Add([]byte{})
	f.Add(make([]byte, 100))
	f.Fuzz(func(t *testing.T, body []byte) {
		file := &memFile{b: append(segHeader(7), body...)}
		files := newFileCache(memFS{file}, 0, 0)
		defer files.close()
		s := &segment{ledger: 7, f: files.file("mem")}
		res, err := s.scan()
		if err != nil {
			t.Fatal(err)
		}
		if s.end > int64(len(file.b)) || (res.badAt < 0) != (s.end == int64(len(file.b))) {
			t.Fatalf("end %d, badAt %d, size %d", s.end, res.badAt, len(file.b))
		}
		for i, e := range s.idx {
			rec := file.b[e.off:s.recordEnd(i)]
			ent, err := s.decodeRecord(rec)
			if err != nil || ent.Pos.Entry != int64(i) || len(ent.Data) != int(e.dataLen) || ent.Meta.PublishTime != e.publish || ent.Meta.NumMessages != e.num {
				t.Fatalf("indexed record %d does not decode: %v", i, err)
			}
		}
	})
}
