package storage

import (
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Memory is a Log held in memory: one ledger, entries in a slice. Like segment files, it frees
// entries in whole chunks of memoryChunk entries, so trimming is cheap and the newest entries
// stay readable after everything was acknowledged, as in a durable log's open segment. Entries
// in reusable buffers (Entry.Hold) are the exception once they add up to memoryHeldTrim: those
// buffers are freed as soon as they may be, all but the newest entry, so that the pool gets
// them back while they are warm.
type Memory struct {
	mu      sync.RWMutex
	ledger  int64
	base    int64 // entry id of entries[0]
	entries []Entry
	size    int64
	held    int64 // bytes of entries in reusable buffers (Entry.Hold)
	closed  bool

	// meter, when not nil, is the store's count of the memory its logs hold (MemoryStore.
	// MemoryInUse); charged is this log's part of it and arrayCap the capacity of the entries'
	// array as allocated (a trimmed slice keeps the whole array until it is copied).
	meter    *atomic.Int64
	charged  int64
	arrayCap int
}

// NewMemory returns an empty in-memory log whose entries live in ledger.
func NewMemory(ledger int64) *Memory { return &Memory{ledger: ledger} }

// entrySize is what one Entry costs in the entries' array.
const entrySize = int64(unsafe.Sizeof(Entry{}))

// entryCost is the memory an entry holds beyond its slot in the array: its buffer to the end of
// the allocation (a pooled buffer is rounded up to its size class, and the frame's command
// comes before the payload) and the strings decoded from its metadata.
func entryCost(meta Meta, data []byte) int64 {
	return int64(cap(data)) + int64(len(meta.Key)+len(meta.ProducerName))
}

// charge adds delta to the log's and the store's count. Called with m.mu held.
func (m *Memory) charge(delta int64) {
	m.charged += delta
	if m.meter != nil {
		m.meter.Add(delta)
	}
}

// chargeArray counts a newly allocated entries array in place of the old one. Called with
// m.mu held, right after the allocation (a slice trimmed since is smaller than its array).
func (m *Memory) chargeArray() {
	m.charge(int64(cap(m.entries)-m.arrayCap) * entrySize)
	m.arrayCap = cap(m.entries)
}

func (m *Memory) Append(meta Meta, data []byte, hold Holder, done func(Position, error)) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		release(hold)
		done(Position{}, ErrClosed)
		return
	}
	pos := Position{Ledger: m.ledger, Entry: m.base + int64(len(m.entries))}
	array := unsafe.SliceData(m.entries)
	m.entries = append(m.entries, Entry{Pos: pos, Meta: meta, Data: data, Hold: hold})
	m.charge(entryCost(meta, data))
	if unsafe.SliceData(m.entries) != array {
		m.chargeArray() // a new array, the old one the garbage collector's
	}
	m.size += int64(len(data))
	if hold != nil {
		m.held += int64(len(data))
	}
	m.mu.Unlock()
	done(pos, nil)
}

// index returns the slice index of p, clamped to [0, len].
func (m *Memory) index(p Position) int {
	switch {
	case p.Ledger < m.ledger:
		return 0
	case p.Ledger > m.ledger:
		return len(m.entries)
	}
	i := p.Entry - m.base
	if i < 0 {
		return 0
	}
	if i > int64(len(m.entries)) {
		return len(m.entries)
	}
	return int(i)
}

func (m *Memory) Read(from Position, maxEntries int) ([]Entry, error) {
	return m.read(from, maxEntries, false)
}

func (m *Memory) ReadHeld(from Position, maxEntries int) ([]Entry, error) {
	return m.read(from, maxEntries, true)
}

func (m *Memory) read(from Position, maxEntries int, held bool) ([]Entry, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	i := m.index(from)
	j := min(len(m.entries), i+maxEntries)
	if i >= j {
		return nil, nil
	}
	out := make([]Entry, j-i)
	copy(out, m.entries[i:j])
	for k := range out {
		out[k].Hold = handOut(out[k].Hold, held)
	}
	return out, nil
}

// handOut gives a caller an entry's holder: another hold if the caller counts (held), else
// none, and the buffer is kept for good. Called with the log's lock held, while the log still
// holds the entry.
func handOut(h Holder, held bool) Holder {
	switch {
	case h == nil:
		return nil
	case held:
		h.Retain()
		return h
	default:
		h.Keep()
		return nil
	}
}

func (m *Memory) First() Position {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return Position{Ledger: m.ledger, Entry: m.base}
}

func (m *Memory) Last() Position {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return Position{Ledger: m.ledger, Entry: m.base + int64(len(m.entries)) - 1}
}

func (m *Memory) Next(p Position) Position {
	if p.Ledger < m.ledger {
		return Position{Ledger: m.ledger, Entry: 0}
	}
	return Position{Ledger: p.Ledger, Entry: p.Entry + 1}
}

func (m *Memory) Get(p Position) (Entry, bool) { return m.get(p, false) }

func (m *Memory) GetHeld(p Position) (Entry, bool) { return m.get(p, true) }

func (m *Memory) get(p Position, held bool) (Entry, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if p.Ledger != m.ledger || p.Entry < m.base || p.Entry >= m.base+int64(len(m.entries)) {
		return Entry{}, false
	}
	e := m.entries[p.Entry-m.base]
	e.Hold = handOut(e.Hold, held)
	return e, true
}

func (m *Memory) FindByTime(ms int64) Position {
	m.mu.RLock()
	defer m.mu.RUnlock()
	// Publish times are not strictly monotonic across producers; upstream also searches as if
	// they were, so a binary search gives the same answer it would.
	i := sort.Search(len(m.entries), func(i int) bool { return m.entries[i].Meta.PublishTime >= ms })
	return Position{Ledger: m.ledger, Entry: m.base + int64(i)}
}

// memoryChunk is how many entries Memory frees at once.
const memoryChunk = 1000

// memoryHeldTrim is how much data in reusable buffers Memory frees as soon as it may, chunk or
// not, so that the buffers go back to their pool while it still has room for them.
const memoryHeldTrim = 4 << 20

func (m *Memory) TrimBefore(p Position) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.index(p)
	if m.held < memoryHeldTrim {
		n -= int((m.base + int64(n)) % memoryChunk)
	} else {
		n = min(n, len(m.entries)-1) // the newest entry stays, as in a segment (lastMessageID)
	}
	if n <= 0 {
		return
	}
	for i := range m.entries[:n] {
		e := &m.entries[i]
		m.charge(-entryCost(e.Meta, e.Data))
		m.size -= int64(len(e.Data))
		if e.Hold != nil {
			m.held -= int64(len(e.Data))
			e.Hold.Release()
		}
		*e = Entry{} // release the payload now
	}
	m.entries = m.entries[n:]
	m.base += int64(n)
	// Trimming advances the slice's start; copy the tail only once the dead prefix dominates,
	// so trimming after every acknowledgement stays linear overall.
	if cap(m.entries) > 1024 && len(m.entries) < cap(m.entries)/4 {
		m.entries = append(make([]Entry, 0, 2*len(m.entries)+16), m.entries...)
		m.chargeArray()
	}
}

func (m *Memory) EntriesFrom(p Position) int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return int64(len(m.entries) - m.index(p))
}

func (m *Memory) Ledgers() []LedgerInfo {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return []LedgerInfo{{ID: m.ledger, First: m.base, Entries: int64(len(m.entries)), Size: m.size}}
}

func (m *Memory) Entries() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return int64(len(m.entries))
}

func (m *Memory) Size() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.size
}

func (m *Memory) isClosed() bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.closed
}

func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	for _, e := range m.entries {
		release(e.Hold)
	}
	m.entries = nil
	m.held = 0
	m.arrayCap = 0
	m.charge(-m.charged)
	return nil
}
