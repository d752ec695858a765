package storage

// Open segment files, bounded. A durable store keeps a file per ledger of every topic, and a
// log that kept each one open would need a descriptor per segment: 20,000 segments kept by
// subscriptions nobody reads would need 20,000, where a common `ulimit -n` is 1,024. So a
// FileStore opens segment files through one fileCache: a segment holds its path and opens the
// file when it is read, written, synced or cut; at most FileStoreOptions.OpenFiles files are
// open at once (the least recently used unused one is closed to open another), and a file
// unused for FileStoreOptions.FileIdle is closed. A file is in use only for the length of one
// operation (a write and its sync count as one), and nothing holds one file while it waits
// for another, so a caller that finds every file in use waits for one to be released without
// risk of waiting forever.
//
// Closing and opening again loses nothing: a sync is issued on the descriptor that wrote, before
// it is released, and reads go by offset.

import (
	"container/list"
	"os"
	"sync"
	"time"
)

// Defaults of FileStoreOptions.OpenFiles and FileIdle: a few hundred descriptors leave most of
// a 1,024 limit to the listeners and connections, and a minute keeps the files of topics whose
// consumers keep up open (their reads come from the tail cache anyway).
const (
	DefaultOpenFiles = 256
	DefaultFileIdle  = time.Minute
)

// fileCache is the bound on a FileStore's open segment files. Its sweeper goroutine closes
// idle files; close stops it.
type fileCache struct {
	fs    FS
	limit int           // 0: no bound
	idle  time.Duration // 0: files are not closed for being idle

	mu     sync.Mutex
	freed  *sync.Cond // a file was released or closed: a waiter may open one
	open   int        // files open, in use or not
	peak   int        // the most open at once
	unused list.List  // *segFile open and not in use, least recently used first
	closed bool

	stop chan struct{}
	done chan struct{}
}

func newFileCache(fs FS, limit int, idle time.Duration) *fileCache {
	c := &fileCache{fs: fs, limit: limit, idle: idle, stop: make(chan struct{}), done: make(chan struct{})}
	c.freed = sync.NewCond(&c.mu)
	if idle > 0 {
		go c.sweeper()
	} else {
		close(c.done)
	}
	return c
}

// segFile is one segment file as the cache knows it. It implements File: each call opens the
// file if the cache closed it, and releases it after.
type segFile struct {
	c    *fileCache
	path string // guarded by c.mu: a rename changes it
	f    File   // nil while closed
	refs int    // operations in progress
	elem *list.Element
	used time.Time
	gone bool // closed for good
}

// file registers the existing file at path, without opening it.
func (c *fileCache) file(path string) *segFile { return &segFile{c: c, path: path} }

// create creates the file at path (it must not exist) and returns it open and unused.
func (c *fileCache) create(path string, perm os.FileMode) (*segFile, error) {
	sf := c.file(path)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.makeRoom(sf); err != nil {
		return nil, err
	}
	f, err := c.fs.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, err
	}
	c.opened(sf, f)
	c.idleLocked(sf)
	return sf, nil
}

// makeRoom waits until one more file may be opened, closing the least recently used unused
// file when the bound is reached. Called with c.mu held; sf is the file to be opened.
func (c *fileCache) makeRoom(sf *segFile) error {
	for c.limit > 0 && c.open >= c.limit && sf.f == nil {
		if c.closed || sf.gone {
			return os.ErrClosed
		}
		if e := c.unused.Front(); e != nil {
			c.closeLocked(e.Value.(*segFile))
			continue
		}
		c.freed.Wait() // every file is in use, each for one operation
	}
	if c.closed || sf.gone {
		return os.ErrClosed
	}
	return nil
}

func (c *fileCache) opened(sf *segFile, f File) {
	sf.f = f
	c.open++
	c.peak = max(c.peak, c.open)
}

// idleLocked puts sf, open and no longer in use, at the back of the unused list.
func (c *fileCache) idleLocked(sf *segFile) {
	sf.used = time.Now()
	sf.elem = c.unused.PushBack(sf)
	c.freed.Broadcast()
}

// closeLocked closes sf's file. Called with c.mu held, sf open and not in use. A close error
// loses nothing: whatever was written through it was synced before it was released.
func (c *fileCache) closeLocked(sf *segFile) error {
	if sf.elem != nil {
		c.unused.Remove(sf.elem)
		sf.elem = nil
	}
	err := sf.f.Close()
	sf.f = nil
	c.open--
	c.freed.Broadcast()
	return err
}

// acquire returns sf's file, opening it if need be, and holds it until release.
func (sf *segFile) acquire() (File, error) {
	c := sf.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.makeRoom(sf); err != nil {
		return nil, err
	}
	if sf.f == nil {
		f, err := c.fs.OpenFile(sf.path, os.O_RDWR, 0)
		if err != nil {
			return nil, err
		}
		c.opened(sf, f)
	} else if sf.elem != nil {
		c.unused.Remove(sf.elem)
		sf.elem = nil
	}
	sf.refs++
	return sf.f, nil
}

// transient runs fn, which opens a file or directory of its own and closes it before it
// returns (an index read or written whole, a directory listed or synced), in a slot of the
// bound, so that the bound counts every descriptor the store opens for its logs.
func (c *fileCache) transient(fn func() error) error {
	c.mu.Lock()
	var none segFile
	if err := c.makeRoom(&none); err != nil {
		c.mu.Unlock()
		return err
	}
	c.open++
	c.peak = max(c.peak, c.open)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.open--
		c.freed.Broadcast()
		c.mu.Unlock()
	}()
	return fn()
}

// syncDir syncs directory dir (FS.SyncDir) in a slot of the bound.
func (c *fileCache) syncDir(dir string) error {
	return c.transient(func() error { return c.fs.SyncDir(dir) })
}

// release ends what acquire began.
func (sf *segFile) release() {
	c := sf.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if sf.refs--; sf.refs > 0 {
		return
	}
	if sf.gone || c.closed {
		c.closeLocked(sf)
		return
	}
	c.idleLocked(sf)
}

// rename renames the file, open or not; later opens use the new path.
func (sf *segFile) rename(to string) error {
	c := sf.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.fs.Rename(sf.path, to); err != nil {
		return err
	}
	sf.path = to
	return nil
}

// Close closes the file for good (at the end of the operation in progress, if any).
func (sf *segFile) Close() error {
	c := sf.c
	c.mu.Lock()
	defer c.mu.Unlock()
	sf.gone = true
	if sf.f == nil || sf.refs > 0 {
		return nil
	}
	return c.closeLocked(sf)
}

func (sf *segFile) Name() string {
	sf.c.mu.Lock()
	defer sf.c.mu.Unlock()
	return sf.path
}

func (sf *segFile) ReadAt(p []byte, off int64) (int, error) {
	f, err := sf.acquire()
	if err != nil {
		return 0, err
	}
	defer sf.release()
	return f.ReadAt(p, off)
}

func (sf *segFile) WriteAt(p []byte, off int64) (int, error) {
	f, err := sf.acquire()
	if err != nil {
		return 0, err
	}
	defer sf.release()
	return f.WriteAt(p, off)
}

func (sf *segFile) Sync() error {
	f, err := sf.acquire()
	if err != nil {
		return err
	}
	defer sf.release()
	return f.Sync()
}

func (sf *segFile) Truncate(size int64) error {
	f, err := sf.acquire()
	if err != nil {
		return err
	}
	defer sf.release()
	return f.Truncate(size)
}

func (sf *segFile) Size() (int64, error) {
	f, err := sf.acquire()
	if err != nil {
		return 0, err
	}
	defer sf.release()
	return f.Size()
}

// sweeper closes files unused for c.idle, until close.
func (c *fileCache) sweeper() {
	defer close(c.done)
	tick := time.NewTicker(max(c.idle/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case now := <-tick.C:
			c.mu.Lock()
			for e := c.unused.Front(); e != nil && now.Sub(e.Value.(*segFile).used) >= c.idle; e = c.unused.Front() {
				c.closeLocked(e.Value.(*segFile))
			}
			c.mu.Unlock()
		}
	}
}

// stats reports the files open now and the most ever open at once.
func (c *fileCache) stats() (open, peak int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open, c.peak
}

// close stops the sweeper and closes every unused file; files in use close when released. The
// logs are closed first, so none should be.
func (c *fileCache) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	for e := c.unused.Front(); e != nil; e = c.unused.Front() {
		c.closeLocked(e.Value.(*segFile))
	}
	c.mu.Unlock()
	close(c.stop)
	<-c.done
}
