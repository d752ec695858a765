package storage

import (
	"errors"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"
)

// FileLog is a durable Log: a topic's entries in segment files (see segment.go for the format)
// in one directory, one ledger per segment. Obtain one from FileStore.OpenLog.
//
// Appends are queued and written by one writer goroutine per log: everything queued is written
// with one write and made durable with one fdatasync (group commit), and only then do the
// entries become readable and their done callbacks run, in append order, on the writer
// goroutine. A done callback must not call Close on its own log.
//
// A second goroutine, the deleter (trash.go), deletes trimmed segments' files and keeps one as
// the spare the next rollover writes over. Both stop with Close.
//
// Locks: qmu guards the append queue; mu guards the segment list, the indexes, the tail cache
// and the counters; dmu the trash and the spare. qmu and mu are never held together; dmu is
// taken after mu, never before it. The writer owns cur (the open segment) and is the only one
// to write to files or to grow a segment; it takes mu to publish what it wrote. Files are
// opened through the store's cache (filecache.go), whose lock is taken inside any of these,
// never around them.
type FileLog struct {
	dir     string
	fs      FS
	files   *fileCache // the store's: segment files are opened through it
	log     *slog.Logger
	segSize int64
	noSync  bool
	// alloc returns a new, never used ledger id above the one given: highest, the highest this
	// log has had, so that ids keep rising within a log whatever happened to the store's
	// sequence (FileStore.allocLedger).
	alloc   func(above int64) (int64, error)
	highest int64
	policy  Rollover // when the open segment is closed besides segSize (filelog_rollover.go)

	qmu     sync.Mutex
	queue   []pendingAppend
	spare   []pendingAppend
	closing bool
	// rolls are Roll calls waiting for the writer; rollSoon asks it to check the rollover
	// policy while idle.
	rolls    []chan struct{}
	rollSoon bool
	wake     chan struct{}
	stopped  chan struct{}

	mu      sync.RWMutex
	segs    []*segment // by ledger; the last one is the open one
	opened  time.Time  // when the open segment was created, for the rollover policy
	entries int64      // stored entries
	size    int64      // their data bytes
	closed  bool
	// tail holds the newest stored entries, tail[tailHead:], consecutive up to the last one,
	// as they were appended (their data is the appender's, which it no longer changes): a
	// consumer that keeps up is served from here without reading the file back and checking
	// it again. At most tailMax bytes of data, and never a trimmed entry.
	tailMax   int
	tail      []Entry
	tailHead  int
	tailBytes int

	// Writer-owned.
	cur    *segment
	broken bool // cur could not be cut back after a failed write: roll to a new segment
	buf    []byte

	// Trimmed segments wait in trash for the deleter goroutine, which deletes their files away
	// from the caller's locks (TrimBefore is called under the topic's). dmu is taken after mu,
	// never before it.
	dmu      sync.Mutex
	trash    []*segment
	spareSeg *segment  // a trimmed segment's file, renamed, for the writer's next rollover
	spareAt  time.Time // when it became the spare
	dclosing bool
	dwake    chan struct{}
	dstopped chan struct{}
}

type pendingAppend struct {
	meta Meta
	data []byte
	hold Holder
	done func(Position, error)
}

// openFileLog recovers the log in dir (creating nothing but its open segment) and starts its
// writer and its deleter.
func openFileLog(dir string, opts FileStoreOptions, files *fileCache, log *slog.Logger, alloc func(above int64) (int64, error)) (*FileLog, error) {
	l := &FileLog{
		dir: dir, fs: opts.FS, files: files, log: log, segSize: opts.SegmentSize, noSync: opts.NoSync, tailMax: opts.TailCache, alloc: alloc,
		policy: opts.Rollover.withDefaults(), opened: time.Now(),
		wake: make(chan struct{}, 1), stopped: make(chan struct{}),
		dwake: make(chan struct{}, 1), dstopped: make(chan struct{}),
	}
	if err := l.recover(); err != nil {
		l.closeFiles()
		for _, s := range l.trash {
			s.f.Close()
		}
		return nil, err
	}
	go l.run()
	go l.deleter()
	return l, nil
}

func (l *FileLog) First() Position {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.first()
}

func (l *FileLog) first() Position {
	for _, s := range l.segs {
		if s.count() > 0 {
			return Position{Ledger: s.ledger, Entry: 0}
		}
	}
	return l.next(l.last())
}

func (l *FileLog) Last() Position {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.last()
}

func (l *FileLog) last() Position {
	for i := len(l.segs) - 1; i >= 0; i-- {
		if s := l.segs[i]; s.count() > 0 {
			return Position{Ledger: s.ledger, Entry: s.count() - 1}
		}
	}
	if len(l.segs) == 0 { // closed
		return Position{Entry: -1}
	}
	return Position{Ledger: l.segs[len(l.segs)-1].ledger, Entry: -1}
}

func (l *FileLog) Next(p Position) Position {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.next(p)
}

// next: within a segment, the following entry; after the last entry of a sealed segment, entry
// 0 of the next; for a ledger this log no longer (or never) had, entry 0 of the next it has.
func (l *FileLog) next(p Position) Position {
	si := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].ledger >= p.Ledger })
	if si == len(l.segs) {
		return Position{Ledger: p.Ledger, Entry: p.Entry + 1}
	}
	if l.segs[si].ledger != p.Ledger {
		return Position{Ledger: l.segs[si].ledger, Entry: 0}
	}
	e := p.Entry + 1
	for e >= l.segs[si].count() && si < len(l.segs)-1 {
		si, e = si+1, 0
	}
	return Position{Ledger: l.segs[si].ledger, Entry: e}
}

// TrimBefore drops the segments wholly before p at once (closing an open segment past its age
// first: filelog_rollover.go) and leaves the deletion of their
// files to the deleter goroutine (Close waits for it). Like upstream, which deletes whole
// ledgers, it frees nothing inside a segment and never touches the open one: entries there
// stay readable (Memory frees whole chunks for the same reason), and what is stored does not
// change with a restart.
func (l *FileLog) TrimBefore(p Position) {
	l.checkAge(time.Now())
	l.mu.Lock()
	if l.closed || len(l.segs) == 0 {
		l.mu.Unlock()
		return
	}
	k := 0
	for k < len(l.segs)-1 {
		s := l.segs[k]
		if s.ledger > p.Ledger || (s.ledger == p.Ledger && p.Entry < s.count()) {
			break
		}
		k++
	}
	if k == 0 {
		l.mu.Unlock()
		return
	}
	for _, s := range l.segs[:k] {
		l.entries -= s.count()
		for _, e := range s.idx {
			l.size -= int64(e.dataLen)
		}
	}
	// No reader can reach these segments once they leave the list under the lock. They go to
	// the deleter before the lock is released, so that a Close, which takes the lock, either
	// comes before this call (and nothing is trimmed) or finds them queued and waits for them.
	l.dmu.Lock()
	l.trash = append(l.trash, l.segs[:k]...)
	l.dmu.Unlock()
	l.segs = slices.Delete(l.segs, 0, k)
	for l.tailHead < len(l.tail) && l.tail[l.tailHead].Pos.Ledger < l.segs[0].ledger {
		l.dropTailHead()
	}
	l.mu.Unlock()
	l.wakeDeleter()
}

func (l *FileLog) EntriesFrom(p Position) int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	si, i := l.seek(p)
	if si == len(l.segs) {
		return 0
	}
	return int64(l.entriesFrom(si, int(i)))
}

func (l *FileLog) Ledgers() []LedgerInfo {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var out []LedgerInfo
	for i, s := range l.segs {
		if s.count() > 0 || i == len(l.segs)-1 {
			out = append(out, LedgerInfo{ID: s.ledger, Entries: s.count(), Size: s.end})
		}
	}
	return out
}

func (l *FileLog) Entries() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.entries
}

func (l *FileLog) Size() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.size
}

// Close writes and syncs everything appended before it (their callbacks run), stops the writer
// and closes the files. Appends after Close fail with ErrClosed. Safe to call twice.
func (l *FileLog) Close() error {
	l.qmu.Lock()
	l.closing = true
	l.qmu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	<-l.stopped
	l.mu.Lock()
	already := l.closed
	l.closed = true // from here on TrimBefore queues nothing
	if !already && l.cur != nil && !l.broken {
		l.seal(l.cur) // the writer has stopped
	}
	l.mu.Unlock()
	l.dmu.Lock()
	l.dclosing = true
	l.dmu.Unlock()
	l.wakeDeleter()
	<-l.dstopped
	if already {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closeFiles()
}

func (l *FileLog) isClosed() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.closed
}

func (l *FileLog) closeFiles() error {
	var errs []error
	for _, s := range l.segs {
		if err := s.f.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	l.segs = nil
	l.entries, l.size = 0, 0
	for _, e := range l.tail[l.tailHead:] {
		release(e.Hold)
	}
	l.tail, l.tailHead, l.tailBytes = nil, 0, 0
	return errors.Join(errs...)
}
