package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
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
// Locks: qmu guards the append queue; mu guards the segment list, the indexes and the
// counters. They are never held together. The writer owns cur (the open segment) and is the
// only one to write to files or to grow a segment; it takes mu to publish what it wrote.
type FileLog struct {
	dir     string
	fs      FS
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

// maxWrite bounds one write, so a long queue does not turn into one huge buffer.
const maxWrite = 8 << 20

// openFileLog recovers the log in dir (creating nothing but its open segment) and starts its
// writer.
func openFileLog(dir string, opts FileStoreOptions, log *slog.Logger, alloc func(above int64) (int64, error)) (*FileLog, error) {
	l := &FileLog{
		dir: dir, fs: opts.FS, log: log, segSize: opts.SegmentSize, noSync: opts.NoSync, tailMax: opts.TailCache, alloc: alloc,
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

func (l *FileLog) recover() error {
	des, err := os.ReadDir(l.dir)
	if err != nil {
		return err
	}
	var ledgers, indexed []int64
	for _, de := range des {
		if !de.Type().IsRegular() {
			continue
		}
		if ledger, ok := parseSegFileName(de.Name()); ok {
			ledgers = append(ledgers, ledger)
			l.highest = max(l.highest, ledger)
			continue
		}
		if ledger, ok := parseIdxFileName(de.Name()); ok {
			indexed = append(indexed, ledger)
			l.highest = max(l.highest, ledger)
			continue
		}
		name, ok := strings.CutSuffix(de.Name(), deletingSuffix)
		if !ok {
			name, ok = strings.CutSuffix(de.Name(), spareSuffix)
		}
		if ledger, ok2 := parseSegFileName(name); ok && ok2 {
			// A trimmed segment's file, left by a stop while it was being deleted or waited
			// as the spare: delete it.
			path := filepath.Join(l.dir, de.Name())
			f, err := l.fs.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				return err
			}
			l.trash = append(l.trash, &segment{ledger: ledger, path: path, f: f})
			l.highest = max(l.highest, ledger)
		}
	}
	slices.Sort(ledgers)
	for _, ledger := range indexed {
		if _, ok := slices.BinarySearch(ledgers, ledger); !ok {
			l.removeIndex(ledger) // its segment was trimmed
		}
	}
	lastClean := false // the last segment kept had nothing cut
	var tail *segment  // the last ledger's segment, scanned, if it is kept
	for i, ledger := range ledgers {
		path := filepath.Join(l.dir, segFileName(ledger))
		f, err := l.fs.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		s := &segment{ledger: ledger, path: path, f: f}
		sealed := i < len(ledgers)-1
		if sealed {
			// A sealed segment opens from its index (segindex.go) when it has a good one.
			err := l.loadIndex(s)
			if err == nil {
				l.segs = append(l.segs, s)
				continue
			}
			if !errors.Is(err, os.ErrNotExist) {
				l.log.Warn("storage: a segment's index does not match it; rebuilding it from the records", "segment", path, "error", err)
			}
		}
		res, err := s.scan()
		if err != nil {
			f.Close()
			return fmt.Errorf("storage: recover %s: %w", path, err)
		}
		lastClean = res.badAt < 0
		if res.badAt < 0 {
			l.segs = append(l.segs, s)
			if sealed {
				l.writeIndex(s)
			} else {
				tail = s
			}
			continue
		}
		cut := res.fileSize - res.badAt
		if i < len(ledgers)-1 || (res.badAt == 0 && res.fileSize > segHeaderSize) {
			// A sealed segment (or a header) was complete and synced before anything after it
			// was written: this is damage, not a crash. Keep the file for inspection and serve
			// what precedes the damage.
			l.log.Error("storage: corrupt record in sealed segment; serving it only up to the damage",
				"segment", path, "offset", res.badAt, "unserved_bytes", cut, "reason", res.reason,
				"entries_served", s.count())
			if res.badAt == 0 {
				f.Close()
				continue
			}
			l.segs = append(l.segs, s)
			continue
		}
		if res.badAt == 0 {
			// A torn header: it is synced before any record is written, so no entry was
			// acknowledged here. (A damaged header with records behind it is kept, above.)
			f.Close()
			if err := l.fs.Remove(path); err != nil {
				return err
			}
			l.log.Warn("storage: removed a segment with a torn header", "segment", path, "bytes", res.fileSize)
			continue
		}
		if err := f.Truncate(res.badAt); err != nil {
			f.Close()
			return fmt.Errorf("storage: cut torn tail of %s: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("storage: cut torn tail of %s: %w", path, err)
		}
		l.log.Warn("storage: cut a torn or corrupt tail", "segment", path, "offset", res.badAt,
			"bytes", cut, "reason", res.reason, "entries_kept", s.count())
		l.segs = append(l.segs, s)
		tail = s
	}
	for _, s := range l.segs {
		l.entries += s.count()
		for _, e := range s.idx {
			l.size += e.dataLen
		}
	}
	// An empty, undamaged last segment is reused; otherwise entries go to a new ledger, as a
	// BookKeeper ledger is never reopened for writing: whatever happened to the old tail (a
	// record cut there may have been acknowledged if it was damaged later), its ids stay its.
	if n := len(l.segs); n > 0 && lastClean && l.segs[n-1].count() == 0 {
		l.cur = l.segs[n-1]
		return nil
	}
	s, err := l.createSegment()
	if err != nil {
		return err
	}
	if tail != nil {
		l.writeIndex(tail) // sealed from now on: the next open reads its index
	}
	l.segs = append(l.segs, s)
	l.cur = s
	return nil
}

// createSegment allocates a ledger and gives it the spare file or a new one, durable before it
// is used.
func (l *FileLog) createSegment() (*segment, error) {
	ledger, err := l.alloc(l.highest)
	if err != nil {
		return nil, ioError(fmt.Errorf("storage: allocate ledger: %w", err))
	}
	l.highest = ledger
	path := filepath.Join(l.dir, segFileName(ledger))
	if spare := l.takeSpare(); spare != nil {
		s, err := l.reuse(spare, ledger, path)
		if err == nil {
			return s, nil
		}
		l.log.Warn("storage: could not reuse a segment file; creating one", "segment", spare.path, "error", err)
		l.discard(spare)
	}
	f, err := l.fs.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, ioError(err)
	}
	_, err = f.WriteAt(segHeader(ledger), 0)
	if err == nil && !l.noSync {
		if err = f.Sync(); err == nil {
			err = l.fs.SyncDir(l.dir)
		}
	}
	if err != nil {
		f.Close()
		l.fs.Remove(path)
		return nil, ioError(err)
	}
	return &segment{ledger: ledger, seed: recordSeed(ledger), path: path, f: f, end: segHeaderSize}, nil
}

// ioError marks a full disk (or quota) so that callers can tell it from other failures.
func ioError(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w", ErrNoSpace, err)
	}
	return err
}

// Append queues the entry; done runs on the writer goroutine once it is durable.
func (l *FileLog) Append(meta Meta, data []byte, hold Holder, done func(Position, error)) {
	if n := recordSize(&meta, data) - recPrefix; n > maxRecordBody {
		release(hold)
		done(Position{}, fmt.Errorf("storage: entry of %d bytes is over the %d-byte limit", n, maxRecordBody))
		return
	}
	l.qmu.Lock()
	if l.closing {
		l.qmu.Unlock()
		release(hold)
		done(Position{}, ErrClosed)
		return
	}
	l.queue = append(l.queue, pendingAppend{meta: meta, data: data, hold: hold, done: done})
	l.qmu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

func (l *FileLog) run() {
	defer close(l.stopped)
	for {
		l.qmu.Lock()
		for len(l.queue) == 0 && !l.closing && len(l.rolls) == 0 && !l.rollSoon {
			l.qmu.Unlock()
			<-l.wake
			l.qmu.Lock()
		}
		batch := l.queue
		l.queue, l.spare = l.spare[:0], nil
		rolls, soon := l.rolls, l.rollSoon
		l.rolls, l.rollSoon = nil, false
		closing := l.closing
		l.qmu.Unlock()
		if len(batch) > 0 {
			l.commit(batch)
		}
		l.rollRequested(rolls, soon)
		if len(batch) == 0 {
			if closing {
				return // everything queued before Close is written
			}
			continue
		}
		clear(batch) // release payloads and callbacks
		l.qmu.Lock()
		l.spare = batch[:0]
		l.qmu.Unlock()
	}
}

// commit writes batch in as few write+sync rounds as the segment size and maxWrite allow, then
// publishes each round and runs its callbacks. After a failure the rest of the batch fails too,
// so callbacks stay in append order and no later entry lands before an earlier failed one.
func (l *FileLog) commit(batch []pendingAppend) {
	now := time.Now()
	for i := 0; i < len(batch); {
		first := recordSize(&batch[i].meta, batch[i].data)
		if l.broken || (l.cur.count() > 0 && l.cur.end+int64(first) > l.segSize) || l.rollDue(l.cur.count(), now) {
			if err := l.roll(); err != nil {
				l.fail(batch[i:], err)
				return
			}
		}
		cur := l.cur
		base := cur.count()
		buf := l.buf[:0]
		j := i
		for ; j < len(batch); j++ {
			n := recordSize(&batch[j].meta, batch[j].data)
			if j > i && (cur.end+int64(len(buf)+n) > l.segSize || len(buf)+n > maxWrite || l.rollDue(base+int64(j-i), now)) {
				break
			}
			buf = appendRecord(buf, cur.seed, base+int64(j-i), &batch[j].meta, batch[j].data)
		}
		if cap(buf) <= maxWrite {
			l.buf = buf
		}
		if err := l.write(cur, buf); err != nil {
			l.fail(batch[i:], err)
			return
		}
		l.mu.Lock()
		off := cur.end
		for k := i; k < j; k++ {
			n := int64(recordSize(&batch[k].meta, batch[k].data))
			cur.idx = append(cur.idx, indexEntry{off: off, publish: batch[k].meta.PublishTime, dataLen: int64(len(batch[k].data))})
			off += n
			l.size += int64(len(batch[k].data))
		}
		l.entries += int64(j - i)
		cur.end = off
		for k := i; k < j; k++ {
			l.cacheTail(Entry{Pos: Position{Ledger: cur.ledger, Entry: base + int64(k-i)}, Meta: batch[k].meta, Data: batch[k].data, Hold: batch[k].hold})
			batch[k].hold = nil // the tail's now
		}
		l.mu.Unlock()
		for k := i; k < j; k++ {
			batch[k].done(Position{Ledger: cur.ledger, Entry: base + int64(k-i)}, nil)
		}
		i = j
	}
}

func (l *FileLog) fail(batch []pendingAppend, err error) {
	for _, p := range batch {
		release(p.hold)
		p.done(Position{}, err)
	}
}

// write appends buf at cur.end and syncs it. On failure it cuts the file back to cur.end, so a
// half-written or unsynced record never stays behind to be read after a restart.
func (l *FileLog) write(cur *segment, buf []byte) error {
	_, err := cur.f.WriteAt(buf, cur.end)
	if err == nil && !l.noSync {
		err = cur.f.Sync()
	}
	if err == nil {
		return nil
	}
	err = ioError(err)
	terr := cur.f.Truncate(cur.end)
	if terr == nil && !l.noSync {
		terr = cur.f.Sync()
	}
	if terr != nil {
		// The file's tail is unknown; it is never read (reads stop at cur.end) and, as a sealed
		// segment, recovery serves it only up to the first bad record. Write on in a new one.
		l.broken = true
		l.log.Error("storage: could not cut a failed write back; sealing the segment",
			"segment", cur.path, "offset", cur.end, "error", terr)
	}
	l.log.Warn("storage: append failed", "segment", cur.path, "offset", cur.end, "bytes", len(buf), "error", err)
	return err
}

// roll seals the open segment and opens a new one.
func (l *FileLog) roll() error {
	if !l.broken {
		l.seal(l.cur)
		l.writeIndex(l.cur)
	}
	s, err := l.createSegment()
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.segs = append(l.segs, s)
	l.opened = time.Now()
	l.mu.Unlock()
	l.cur = s
	l.broken = false
	return nil
}

// seek returns the segment index and entry index of the first stored entry at or after p,
// clamped like Memory: an earlier or trimmed p gives the first stored entry.
func (l *FileLog) seek(p Position) (int, int64) {
	si := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].ledger >= p.Ledger })
	if si == len(l.segs) {
		return si, 0
	}
	s := l.segs[si]
	if s.ledger == p.Ledger && p.Entry > 0 {
		return si, min(p.Entry, s.count())
	}
	return si, 0
}

// maxRead bounds one pread; Read issues as many as it needs.
const maxRead = 4 << 20

func (l *FileLog) Read(from Position, maxEntries int) ([]Entry, error) {
	return l.read(from, maxEntries, false)
}

func (l *FileLog) ReadHeld(from Position, maxEntries int) ([]Entry, error) {
	return l.read(from, maxEntries, true)
}

func (l *FileLog) read(from Position, maxEntries int, held bool) ([]Entry, error) {
	for {
		out, bad, err := l.readOnce(from, maxEntries, held)
		if bad == nil {
			return out, err
		}
		// A damaged record in a sealed segment ends what is served of it; read on past it.
		l.cutDamaged(bad.seg, bad.entry)
	}
}

// damage is a record of a sealed segment that failed its checksum when read.
type damage struct {
	seg   *segment
	entry int
}

func (l *FileLog) readOnce(from Position, maxEntries int, held bool) ([]Entry, *damage, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return nil, nil, ErrClosed
	}
	if maxEntries <= 0 {
		return nil, nil, nil
	}
	si, e := l.seek(from)
	for si < len(l.segs) && e >= l.segs[si].count() && si < len(l.segs)-1 {
		si, e = si+1, 0
	}
	if si < len(l.segs) {
		if out, ok := l.fromTail(Position{Ledger: l.segs[si].ledger, Entry: e}, maxEntries, held); ok {
			return out, nil, nil
		}
	}
	var out []Entry
	for si < len(l.segs) && len(out) < maxEntries {
		s := l.segs[si]
		if e >= s.count() {
			si++
			e = 0
			continue
		}
		i := int(e)
		want := min(len(s.idx), i+maxEntries-len(out))
		start := s.idx[i].off
		j := i + 1
		for j < want && s.recordEnd(j)-start <= maxRead {
			j++
		}
		buf := make([]byte, s.recordEnd(j-1)-start)
		if _, err := s.f.ReadAt(buf, start); err != nil {
			return out, nil, fmt.Errorf("storage: read %s at %d: %w", s.path, start, err)
		}
		if out == nil {
			out = make([]Entry, 0, min(maxEntries, l.entriesFrom(si, i)))
		}
		for k := i; k < j; k++ {
			ent, err := s.decodeRecord(buf[s.idx[k].off-start : s.recordEnd(k)-start])
			if err == nil && ent.Pos.Entry != int64(k) {
				err = errCorrupt
			}
			if err != nil && si < len(l.segs)-1 {
				return nil, &damage{seg: s, entry: k}, nil
			}
			if err != nil {
				l.log.Error("storage: record fails its checksum", "segment", s.path, "entry", k, "offset", s.idx[k].off)
				return out, nil, fmt.Errorf("storage: %s entry %d at offset %d: %w", s.path, k, s.idx[k].off, err)
			}
			out = append(out, ent)
		}
		e = int64(j)
	}
	return out, nil, nil
}

// cutDamaged ends what is served of sealed segment s before its entry k, whose record failed
// its checksum when read: the rule a scan applies at open (the first invalid record ends the
// segment), applied when a segment opened from its index meets the damage. The file is kept for
// inspection, as recovery keeps it, and its index removed, so that the next open scans it.
func (l *FileLog) cutDamaged(s *segment, k int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.Index(l.segs, s)
	if l.closed || i < 0 || i == len(l.segs)-1 || k >= len(s.idx) {
		return // trimmed, closed or cut meanwhile
	}
	off := s.idx[k].off
	for _, e := range s.idx[k:] {
		l.size -= e.dataLen
	}
	l.entries -= int64(len(s.idx) - k)
	s.idx = s.idx[:k:k]
	s.end = off
	l.removeIndex(s.ledger)
	l.log.Error("storage: corrupt record in sealed segment; serving it only up to the damage",
		"segment", s.path, "offset", off, "reason", "bad checksum", "entries_served", k)
}

// entriesFrom counts the entries from segment si, entry i on (a capacity hint).
func (l *FileLog) entriesFrom(si, i int) int {
	n := len(l.segs[si].idx) - i
	for _, s := range l.segs[si+1:] {
		n += len(s.idx)
	}
	return n
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

func (l *FileLog) Get(p Position) (Entry, bool) { return l.get(p, false) }

func (l *FileLog) GetHeld(p Position) (Entry, bool) { return l.get(p, true) }

func (l *FileLog) get(p Position, held bool) (Entry, bool) {
	ent, ok, bad := l.getOnce(p, held)
	if bad != nil {
		l.cutDamaged(bad.seg, bad.entry)
	}
	return ent, ok
}

func (l *FileLog) getOnce(p Position, held bool) (ent Entry, ok bool, bad *damage) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	si := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].ledger >= p.Ledger })
	if si == len(l.segs) || l.segs[si].ledger != p.Ledger {
		return Entry{}, false, bad
	}
	s := l.segs[si]
	if p.Entry < 0 || p.Entry >= s.count() {
		return Entry{}, false, bad
	}
	if es, ok := l.fromTail(p, 1, held); ok {
		return es[0], true, nil
	}
	i := int(p.Entry)
	buf := make([]byte, s.recordEnd(i)-s.idx[i].off)
	if _, err := s.f.ReadAt(buf, s.idx[i].off); err != nil {
		l.log.Error("storage: read failed", "segment", s.path, "entry", i, "error", err)
		return Entry{}, false, bad
	}
	ent, err := s.decodeRecord(buf)
	if err != nil || ent.Pos.Entry != p.Entry {
		if si < len(l.segs)-1 {
			bad = &damage{seg: s, entry: i}
			return Entry{}, false, bad
		}
		l.log.Error("storage: record fails its checksum", "segment", s.path, "entry", i, "offset", s.idx[i].off)
		return Entry{}, false, bad
	}
	return ent, true, nil
}

// FindByTime binary-searches the stored entries as one sequence, as Memory does, using the
// publish times kept in the index.
func (l *FileLog) FindByTime(ms int64) Position {
	l.mu.RLock()
	defer l.mu.RUnlock()
	// starts[k] is the global index of segment k's first entry.
	starts := make([]int, len(l.segs)+1)
	for k, s := range l.segs {
		starts[k+1] = starts[k] + len(s.idx)
	}
	locate := func(g int) (*segment, int) {
		k := sort.Search(len(l.segs), func(k int) bool { return starts[k+1] > g })
		s := l.segs[k]
		return s, g - starts[k]
	}
	total := starts[len(l.segs)]
	g := sort.Search(total, func(g int) bool {
		s, i := locate(g)
		return s.idx[i].publish >= ms
	})
	if g == total {
		return l.next(l.last())
	}
	s, i := locate(g)
	return Position{Ledger: s.ledger, Entry: int64(i)}
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
			l.size -= e.dataLen
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
