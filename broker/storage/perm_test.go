package storage

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// The data directory holds the cluster's messages: every file and directory the store creates
// is its owner's alone (they were readable by anyone before), while a data directory that
// existed keeps the mode its owner gave it.
func TestFileStoreDataIsPrivate(t *testing.T) {
	t.Parallel()
	for _, made := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "data")
		if made {
			if err := os.Mkdir(dir, 0o750); err != nil {
				t.Fatal(err)
			}
			os.Chmod(dir, 0o750) // whatever the umask
		}
		s, err := OpenFileStore(dir, FileStoreOptions{SegmentSize: 4 << 10, NoSync: true, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		l, err := s.OpenLog("persistent://public/default/private")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 40 { // several segments, sealed ones with their index
			mustAppend(t, l, testMeta(i), fmt.Appendf(nil, "%0300d", i))
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		files := 0
		err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			switch {
			case path == dir && made:
				if fi.Mode().Perm() != 0o750 {
					t.Errorf("%s: mode %v, want the 0750 it was made with", path, fi.Mode().Perm())
				}
			case fi.Mode().Perm()&0o077 != 0:
				t.Errorf("%s: mode %v, want no access for group and others", path, fi.Mode().Perm())
			}
			if !d.IsDir() {
				files++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if files < 4 { // LOCK, meta.db, segments and an index at least
			t.Errorf("%d files in %s: the test checked too little", files, dir)
		}
	}
}
