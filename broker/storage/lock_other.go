//go:build !unix

package storage

import (
	"os"
	"path/filepath"
)

// lockDir without flock only creates the lock file: a second process is not kept out.
func lockDir(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, filePerm)
}

func unlockDir(f *os.File) error { return f.Close() }
