package storage

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Memory is a Log held in memory, in ledgers as upstream's managed ledger: appends go to the
// open ledger, which is closed and replaced as the Rollover policy says (or on Roll), and
// TrimBefore frees closed ledgers only, whole. So what was appended stays readable while its
// ledger is open, acknowledged or not, as upstream's open ledger does, and a subscription
// created later from the earliest position reads it. How a ledger keeps its entries is in
// memledger.go.
//
// A ledger is also closed when the next entry would take its data past ledgerCap (64 MiB, a
// durable segment's size), whatever its age. Upstream keeps a full ledger open until it is ten
// minutes old, on disk; in memory that would hold the last ten minutes of a busy topic, and
// memory that is never handed back costs more than its size: every new batch would need
// freshly mapped pages (page faults, zeroing) instead of a receive buffer the pool already
// has, which took the in-memory broker from 0.85 to 1.4 µs of CPU per message in make bench.
// A MemoryStore goes further by default (memstore.go): ledgers of 2 MiB, closed without a
// minimum age, so that acknowledged data is freed a ledger behind the slowest subscription.
type Memory struct {
	mu      sync.RWMutex
	ledgers []*memLedger // oldest first; the last is the open one
	entries int64        // stored entries
	size    int64        // their data bytes
	closed  bool

	policy    Rollover
	ledgerCap int64        // data bytes past which a ledger is closed; 0: no bound
	alloc     func() int64 // a new ledger id
	now       func() time.Time
	reuse     *memReuse // the store's: where ledgers' slabs and pages come from (nil: none)

	// meter, when not nil, is the store's count of the memory its logs hold (MemoryStore.
	// MemoryInUse); charged is this log's part of it.
	meter   *atomic.Int64
	charged int64
}

// newMemory returns an empty in-memory log whose ledgers get their ids from alloc and their
// memory through reuse (nil: from the garbage collector only).
func newMemory(policy Rollover, alloc func() int64, reuse *memReuse) *Memory {
	m := &Memory{policy: policy.withDefaults(), alloc: alloc, now: time.Now, reuse: reuse}
	m.ledgers = []*memLedger{newMemLedger(alloc(), m.now(), reuse)}
	return m
}

// charge adds delta to the log's and the store's count. Called with m.mu held.
func (m *Memory) charge(delta int64) {
	m.charged += delta
	if m.meter != nil {
		m.meter.Add(delta)
	}
}

func (m *Memory) open() *memLedger { return m.ledgers[len(m.ledgers)-1] }

func (m *Memory) Append(meta Meta, data []byte, hold Holder, done func(Position, error)) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		release(hold)
		done(Position{}, ErrClosed)
		return
	}
	// Upstream checks after each append whether the ledger is full; checking before the next
	// one closes it at the same entry.
	g := m.open()
	if m.policy.due(g.n, g.written, g.created, m.now()) || m.overCap(g, len(data)) {
		g = m.roll()
	}
	pos := Position{Ledger: g.id, Entry: g.n}
	m.charge(g.appendEntry(meta, data, hold, m.room(g)))
	m.entries++
	m.size += int64(len(data))
	m.mu.Unlock()
	done(pos, nil)
}

// room is how many more data bytes ledger g takes before it is full by size (MaxBytes, or
// ledgerCap), or 0 when a minimum age may keep it open past that. Called with m.mu held.
func (m *Memory) room(g *memLedger) int64 {
	limit := m.policy.MaxBytes
	if m.policy.MinAge > 0 {
		limit = m.ledgerCap // upstream's minimum age: only the cap closes a young ledger
	}
	if m.ledgerCap > 0 && (limit <= 0 || m.ledgerCap < limit) {
		limit = m.ledgerCap
	}
	if limit <= 0 {
		return 0
	}
	return max(limit-g.written, 0)
}

// overCap reports whether appending n bytes would take ledger g past ledgerCap; an empty
// ledger takes any entry.
func (m *Memory) overCap(g *memLedger, n int) bool {
	return m.ledgerCap > 0 && g.n > 0 && g.written+int64(n) > m.ledgerCap
}

// Copies implements Copier: small entries are copied into the ledger's slabs (memledger.go).
func (m *Memory) Copies(dataLen, keyLen int) bool { return copies(dataLen, keyLen) }

// roll closes the open ledger and opens a new one, which it returns. Called with m.mu held.
func (m *Memory) roll() *memLedger {
	g := newMemLedger(m.alloc(), m.now(), m.reuse)
	m.ledgers = append(m.ledgers, g)
	return g
}

// Roll closes the open ledger, if it holds anything, so that TrimBefore may free it: what
// upstream does when a topic is unloaded.
func (m *Memory) Roll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed && m.open().n > 0 {
		m.roll()
	}
}

// locate returns the ledger index and entry id of the first stored entry at or after p;
// li == len(m.ledgers) when there is none.
func (m *Memory) locate(p Position) (li int, id int64) {
	li = sort.Search(len(m.ledgers), func(i int) bool { return m.ledgers[i].id >= p.Ledger })
	for ; li < len(m.ledgers); li++ {
		g := m.ledgers[li]
		id = g.first
		if g.id == p.Ledger {
			id = max(id, p.Entry)
		}
		if id < g.n {
			return li, id
		}
		p = Position{Ledger: g.id + 1}
	}
	return li, 0
}

func (m *Memory) Read(from Position, maxEntries int) ([]Entry, error) {
	return m.read(nil, from, maxEntries, false)
}

func (m *Memory) ReadHeld(dst []Entry, from Position, maxEntries int) ([]Entry, error) {
	return m.read(dst, from, maxEntries, true)
}

// read appends to dst the entries Read or ReadHeld (held) returns.
func (m *Memory) read(dst []Entry, from Position, maxEntries int, held bool) ([]Entry, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return dst, ErrClosed
	}
	li, id := m.locate(from)
	if li == len(m.ledgers) || maxEntries <= 0 {
		return dst, nil
	}
	n := min(int64(maxEntries), m.entriesFrom(li, id))
	out := slices.Grow(dst, int(n))
	n += int64(len(dst))
	for li < len(m.ledgers) && int64(len(out)) < n {
		g := m.ledgers[li]
		for ; id < g.n && int64(len(out)) < n; id++ {
			out = append(out, g.entry(id, held))
		}
		if li++; li < len(m.ledgers) {
			id = m.ledgers[li].first
		}
	}
	return out, nil
}

// entriesFrom counts the stored entries from ledger li's entry id on. Called with m.mu held.
func (m *Memory) entriesFrom(li int, id int64) int64 {
	if li >= len(m.ledgers) {
		return 0
	}
	n := m.ledgers[li].n - id
	for _, g := range m.ledgers[li+1:] {
		n += g.stored()
	}
	return n
}

// handOut gives a caller e, whose data and key are in a buffer h holds (nil: in memory of the
// garbage collector's): another hold if the caller counts (held), else a copy of the data and
// key, as the buffer is reused once nobody who counts holds it. Called with the log's lock
// held, while the log still holds the entry.
func handOut(e *Entry, h Holder, held bool) {
	switch {
	case h == nil:
	case held:
		h.Retain()
		e.Hold = h
	default:
		*e = e.Copy()
	}
}

func (m *Memory) First() Position {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, g := range m.ledgers {
		if g.stored() > 0 {
			return Position{Ledger: g.id, Entry: g.first}
		}
	}
	return m.next(m.last())
}

func (m *Memory) Last() Position {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.last()
}

// last is the newest entry appended (stored, unless a volatile log dropped it), or (open
// ledger, −1). Called with m.mu held.
func (m *Memory) last() Position {
	for i := len(m.ledgers) - 1; i >= 0; i-- {
		if g := m.ledgers[i]; g.n > 0 {
			return Position{Ledger: g.id, Entry: g.n - 1}
		}
	}
	if len(m.ledgers) == 0 { // closed
		return Position{Entry: -1}
	}
	return Position{Ledger: m.open().id, Entry: -1}
}

func (m *Memory) Next(p Position) Position {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.next(p)
}

// next: within a ledger, the following entry; after the last entry of a closed ledger, the
// first of the next; for a ledger this log no longer (or never) had, the first of the next it
// has. As FileLog's.
func (m *Memory) next(p Position) Position {
	li := sort.Search(len(m.ledgers), func(i int) bool { return m.ledgers[i].id >= p.Ledger })
	if li == len(m.ledgers) {
		return Position{Ledger: p.Ledger, Entry: p.Entry + 1}
	}
	g := m.ledgers[li]
	if g.id != p.Ledger {
		return Position{Ledger: g.id, Entry: g.first}
	}
	if p.Entry+1 >= g.n && li < len(m.ledgers)-1 {
		g = m.ledgers[li+1]
		return Position{Ledger: g.id, Entry: g.first}
	}
	return Position{Ledger: p.Ledger, Entry: p.Entry + 1}
}

func (m *Memory) Get(p Position) (Entry, bool) { return m.get(p, false) }

func (m *Memory) GetHeld(p Position) (Entry, bool) { return m.get(p, true) }

func (m *Memory) get(p Position, held bool) (Entry, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	li := sort.Search(len(m.ledgers), func(i int) bool { return m.ledgers[i].id >= p.Ledger })
	if li == len(m.ledgers) {
		return Entry{}, false
	}
	g := m.ledgers[li]
	if g.id != p.Ledger || p.Entry < g.first || p.Entry >= g.n {
		return Entry{}, false
	}
	return g.entry(p.Entry, held), true
}

// FindByTime searches the stored entries as one sequence. Publish times are not strictly
// monotonic across producers; upstream also searches as if they were, so a binary search gives
// the same answer it would.
func (m *Memory) FindByTime(ms int64) Position {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, g := range m.ledgers {
		if g.stored() == 0 {
			continue
		}
		if id := g.findByTime(ms); id < g.n {
			return Position{Ledger: g.id, Entry: id}
		}
	}
	return m.next(m.last())
}

// TrimBefore frees the closed ledgers wholly before p, never the open one; a ledger past its
// age limit (Rollover.MaxAge) is closed first, as upstream's periodic check does.
func (m *Memory) TrimBefore(p Position) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	if g := m.open(); m.policy.due(g.n, g.written, g.created, m.now()) {
		m.roll()
	}
	k := 0
	for k < len(m.ledgers)-1 {
		g := m.ledgers[k]
		if g.id > p.Ledger || (g.id == p.Ledger && p.Entry < g.n) {
			break
		}
		k++
	}
	m.freeLedgers(k)
}

// freeLedgers frees the k oldest ledgers. Called with m.mu held.
func (m *Memory) freeLedgers(k int) {
	for _, g := range m.ledgers[:k] {
		m.entries -= g.stored()
		m.size -= g.size
		m.charge(-g.cost())
		g.free()
	}
	clear(m.ledgers[:k])
	m.ledgers = m.ledgers[k:]
}

// DropBefore frees every entry before p, in the open ledger too: for topics that keep nothing
// a consumer could not take at once (non-persistent ones).
func (m *Memory) DropBefore(p Position) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	li, id := m.locate(p)
	if li == len(m.ledgers) {
		li, id = len(m.ledgers)-1, m.open().n
	}
	m.freeLedgers(li)
	g := m.ledgers[0]
	before := g.stored()
	m.charge(-g.dropBefore(id))
	m.entries -= before - g.stored()
	m.size = 0
	for _, g := range m.ledgers {
		m.size += g.size
	}
}

func (m *Memory) EntriesFrom(p Position) int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	li, id := m.locate(p)
	return m.entriesFrom(li, id)
}

func (m *Memory) MessagesFrom(p Position) int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	li, id := m.locate(p)
	return m.messagesFrom(li, id)
}

func (m *Memory) MessagesBetween(from, to Position) int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	lf, i := m.locate(from)
	lt, j := m.locate(to)
	before := func(li int, id int64) int64 { return m.ledgers[li].messagesBefore(id) }
	return messagesBetween(lf, i, lt, j, before, m.messagesFrom)
}

// messagesFrom counts the messages of the stored entries from ledger li's entry id on.
// Called with m.mu held.
func (m *Memory) messagesFrom(li int, id int64) int64 {
	if li >= len(m.ledgers) {
		return 0
	}
	n := m.ledgers[li].messages(id)
	for _, g := range m.ledgers[li+1:] {
		n += g.messages(g.first)
	}
	return n
}

func (m *Memory) Ledgers() []LedgerInfo {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]LedgerInfo, 0, len(m.ledgers))
	for _, g := range m.ledgers {
		out = append(out, LedgerInfo{ID: g.id, First: g.first, Entries: g.stored(), Size: g.size})
	}
	return out
}

func (m *Memory) Entries() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.entries
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
	if m.closed {
		return nil
	}
	m.closed = true
	for _, g := range m.ledgers {
		g.free()
	}
	m.ledgers = nil
	m.entries, m.size = 0, 0
	m.charge(-m.charged)
	return nil
}
