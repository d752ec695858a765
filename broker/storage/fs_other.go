//go:build !linux

package storage

import "os"

// datasync is fsync where the platform has no fdatasync.
func datasync(f *os.File) error { return f.Sync() }
