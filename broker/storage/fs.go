package storage

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
)

// FS is the file layer segment files are written through. The durable store uses the
// operating system's (OSFS); tests wrap it in a FaultFS to make writes and syncs fail the way a
// full or failing disk does, without root or a real small disk.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Remove(name string) error
	Rename(from, to string) error
	// SyncDir makes a directory's entries (files created or removed in it) durable.
	SyncDir(dir string) error
}

// File is an open segment file. Writes go to explicit offsets so that, after a failed write, the
// writer can truncate back to the last good offset and write there again.
type File interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	// Sync makes the file's data durable (fdatasync where there is one).
	Sync() error
	Truncate(size int64) error
	Size() (int64, error)
	Name() string
	Close() error
}

// OSFS is the operating system's file layer.
type OSFS struct{}

func (OSFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (OSFS) Remove(name string) error { return os.Remove(name) }

func (OSFS) Rename(from, to string) error { return os.Rename(from, to) }

func (OSFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

type osFile struct{ *os.File }

func (f osFile) Sync() error { return datasync(f.File) }

func (f osFile) Size() (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// FaultFS wraps a file layer (OSFS if FS is nil) and injects write and sync failures: a test
// sets an error with FailWrites or FailSyncs (syscall.ENOSPC for a full disk, syscall.EIO for a
// failing one) and clears it with Heal. A failing write first writes half of its bytes, as a
// write that runs out of space part-way does. It counts syncs, writes and bytes read.
// BeforeSync, when set, runs before each sync (a test can block there to see that nothing is
// acknowledged before it); BeforeRemove likewise runs before each file is removed.
//
// It is exported so that tests of the broker can simulate a full disk too.
type FaultFS struct {
	FS FS

	mu           sync.Mutex
	writeErr     error
	syncErr      error
	beforeSync   func(name string)
	beforeRemove func(name string)

	syncs     atomic.Int64
	writes    atomic.Int64
	readBytes atomic.Int64
}

// FailWrites makes every later write fail with err (nil: writes succeed again).
func (f *FaultFS) FailWrites(err error) {
	f.mu.Lock()
	f.writeErr = err
	f.mu.Unlock()
}

// FailSyncs makes every later sync fail with err (nil: syncs succeed again).
func (f *FaultFS) FailSyncs(err error) {
	f.mu.Lock()
	f.syncErr = err
	f.mu.Unlock()
}

// Heal clears injected failures.
func (f *FaultFS) Heal() {
	f.mu.Lock()
	f.writeErr, f.syncErr = nil, nil
	f.mu.Unlock()
}

// BeforeSync sets a hook run before every file sync (nil removes it).
func (f *FaultFS) BeforeSync(fn func(name string)) {
	f.mu.Lock()
	f.beforeSync = fn
	f.mu.Unlock()
}

// BeforeRemove sets a hook run before every file removal (nil removes it).
func (f *FaultFS) BeforeRemove(fn func(name string)) {
	f.mu.Lock()
	f.beforeRemove = fn
	f.mu.Unlock()
}

// Syncs is the number of file syncs that succeeded.
func (f *FaultFS) Syncs() int64 { return f.syncs.Load() }

// Writes is the number of writes that succeeded.
func (f *FaultFS) Writes() int64 { return f.writes.Load() }

// ReadBytes is the number of bytes read from files.
func (f *FaultFS) ReadBytes() int64 { return f.readBytes.Load() }

func (f *FaultFS) inner() FS {
	if f.FS == nil {
		return OSFS{}
	}
	return f.FS
}

func (f *FaultFS) faults() (hook func(string), writeErr, syncErr error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.beforeSync, f.writeErr, f.syncErr
}

func (f *FaultFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	if _, werr, _ := f.faults(); werr != nil && flag&os.O_CREATE != 0 {
		if _, err := os.Stat(name); errors.Is(err, os.ErrNotExist) {
			return nil, &os.PathError{Op: "open", Path: name, Err: werr}
		}
	}
	file, err := f.inner().OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f}, nil
}

func (f *FaultFS) Remove(name string) error {
	f.mu.Lock()
	hook := f.beforeRemove
	f.mu.Unlock()
	if hook != nil {
		hook(name)
	}
	return f.inner().Remove(name)
}

func (f *FaultFS) Rename(from, to string) error { return f.inner().Rename(from, to) }

func (f *FaultFS) SyncDir(dir string) error {
	if _, _, serr := f.faults(); serr != nil {
		return &os.PathError{Op: "sync", Path: dir, Err: serr}
	}
	return f.inner().SyncDir(dir)
}

type faultFile struct {
	File
	fs *FaultFS
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if _, werr, _ := f.fs.faults(); werr != nil {
		n, _ := f.File.WriteAt(p[:len(p)/2], off)
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: werr}
	}
	n, err := f.File.WriteAt(p, off)
	if err == nil {
		f.fs.writes.Add(1)
	}
	return n, err
}

func (f *faultFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.fs.readBytes.Add(int64(n))
	return n, err
}

func (f *faultFile) Sync() error {
	hook, _, serr := f.fs.faults()
	if hook != nil {
		hook(f.Name())
		_, _, serr = f.fs.faults()
	}
	if serr != nil {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: serr}
	}
	err := f.File.Sync()
	if err == nil {
		f.fs.syncs.Add(1)
	}
	return err
}
