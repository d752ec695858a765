package storage

import (
	"fmt"
	"slices"
	"sort"
)

// The read side of a FileLog: reads served from the tail cache or by pread of a segment file,
// checked entry by entry; a read that meets a damaged entry cuts the segment there and retries.

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

// ReadHeld reads into a slice of its own (reads come from the segments a record at a time),
// which it returns as it is when dst holds nothing, the dispatcher's case: no copy into dst.
func (l *FileLog) ReadHeld(dst []Entry, from Position, maxEntries int) ([]Entry, error) {
	out, err := l.read(from, maxEntries, true)
	if len(dst) == 0 {
		return out, err
	}
	return append(dst, out...), err
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
		l.size -= int64(e.dataLen)
	}
	l.entries -= int64(len(s.idx) - k)
	s.cutIndex(k)
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

func (l *FileLog) MessagesFrom(p Position) int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	si, i := l.seek(p)
	return l.messagesFrom(si, i)
}

func (l *FileLog) MessagesBetween(from, to Position) int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	sf, i := l.seek(from)
	st, j := l.seek(to)
	before := func(si int, i int64) int64 { return l.segs[si].messagesBefore(i) }
	return messagesBetween(sf, i, st, j, before, l.messagesFrom)
}

// messagesFrom counts the messages from segment si's entry i on. Called with l.mu held.
func (l *FileLog) messagesFrom(si int, i int64) int64 {
	if si >= len(l.segs) {
		return 0
	}
	s := l.segs[si]
	n := s.msgs.total - s.messagesBefore(i)
	for _, s := range l.segs[si+1:] {
		n += s.msgs.total
	}
	return n
}
