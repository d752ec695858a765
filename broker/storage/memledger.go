package storage

import (
	"math/bits"
	"sync"
	"time"
	"unsafe"
)

// memLedger is one ledger of a Memory log. Its memory is the entries' data plus a small fixed
// cost per entry, with no allocation per entry:
//
//   - Small entries are copied, data then key, into slabs: []byte blocks that grow from
//     memSlabMin to memSlabMax, in entry order, so that freeing a prefix of the ledger frees
//     whole slabs. The copy frees the buffer the entry arrived in, which held the frame's
//     command too and whose size was rounded up by the allocator.
//   - Entries of memDirect bytes and more, and every entry in a reusable buffer (Entry.Hold:
//     the broker's pooled receive buffers), are kept as they are, not copied.
//   - Each entry's index record (memEntry) holds no pointer, in pages of memPage records, so
//     the garbage collector never scans them and growing the index copies nothing. Producer
//     names, few per ledger, are stored once each.
//   - With Blocks (the broker's pool of frame buffers), slabs are borrowed from it and go back
//     to it once the ledger has freed them and every entry handed out of them is released:
//     a steady stream then copies into memory a ledger before it already had, where fresh,
//     zeroed pages for every few megabytes cost more than the copy (page faults). An entry
//     read from a slab is held like one kept in the buffer it arrived in (Entry.Hold). Index
//     pages are borrowed from it too, and go back when freed: nothing outside the ledger sees
//     them. Without Blocks they go back to the store's own free list.
type memLedger struct {
	id      int64
	reuse   *memReuse // where slabs and index pages come from and go back to; nil: none
	created time.Time
	first   int64 // entry id of the oldest stored entry (DropBefore moves it)
	n       int64 // entries appended: first … n−1 are stored
	size    int64 // data bytes of the stored entries
	written int64 // data bytes ever appended, for the rollover rule

	pages    []memIndexPage // pages[k] holds entry ids (pageBase+k)·memPage …
	pageBase int64
	slabs    []memSlab // slabs[k] is slab number slabBase+k
	slabBase int64
	held     []memHeld // held[k] is direct entry number heldBase+k
	heldBase int64
	names    []string
	nameIdx  map[string]uint32
	msgs     msgCounts // of the entries' messages (msgcount.go)
}

// memEntry is one entry's index record. With direct set, ref numbers its memHeld; otherwise
// its data is slab ref's bytes [off, off+n) and its key the keyLen bytes after them.
type memEntry struct {
	publish   int64
	deliverAt int64
	seq       uint64
	ref       uint32
	off       uint32
	n         uint32
	keyLen    uint32
	producer  uint32
	num       int32
	direct    bool
	batched   bool
}

// memIndexPage is one page of index records, and its hold when it was borrowed from Blocks.
type memIndexPage struct {
	recs []memEntry
	hold Holder
}

// memSlab is a block of copied entries; last is the id of the newest entry in it. hold, when
// the slab was borrowed from Blocks, is the ledger's hold of it.
type memSlab struct {
	b    []byte
	last int64
	hold Holder
}

// Blocks lends a memory store the slabs it copies small entries into. Block returns an empty
// block with room for at least n bytes, held once by the caller through h; the block goes back
// for reuse once every holder released it, unless one kept it (Holder).
type Blocks interface {
	Block(n int) (b []byte, h Holder)
}

// memHeld is an entry kept as it arrived.
type memHeld struct {
	id   int64
	data []byte
	key  string
	hold Holder
}

const (
	memPage    = 1024
	memSlabMin = 4 << 10
	// memSlabMax bounds how far a ledger's memory runs ahead of its data. Topics sent to at
	// the same pace reach each slab size together: with 1 MiB slabs, a hundred of them took
	// 100 MB in the same instant for data still to come, and such a jump brings the next
	// garbage collection forward (one CPU: a cycle is felt in every producer's latency).
	memSlabMax = 256 << 10
	// memDirect is the size from which an entry is kept as it arrived: copying it saves
	// little, and it would fill a slab on its own.
	memDirect = 16 << 10
)

// floorPow2 is the largest power of two not above n (n > 0).
func floorPow2(n int) int { return 1 << (bits.Len(uint(n)) - 1) }

// ceilPow2 is the smallest power of two not below n (n > 0).
func ceilPow2(n int) int { return 1 << bits.Len(uint(n-1)) }

// copies reports whether an entry without a Holder is copied into a slab.
func copies(dataLen, keyLen int) bool { return dataLen+keyLen < memDirect }

// memEntrySize is what one index record costs.
const memEntrySize = int64(unsafe.Sizeof(memEntry{}))

func newMemLedger(id int64, now time.Time, reuse *memReuse) *memLedger {
	return &memLedger{id: id, created: now, reuse: reuse}
}

// memReuse is what a MemoryStore's ledgers borrow and give back: slabs and index pages through
// Blocks, or without Blocks, index pages through a free list of at most maxFreePages.
type memReuse struct {
	blocks Blocks
	mu     sync.Mutex
	pages  [][]memEntry
}

// maxFreePages bounds the index pages kept for reuse: 14 MiB, enough for the ledgers a
// broker's busy topics free together (topics sent to at the same pace fill their ledgers at
// the same time: a hundred of them with entries of 1 KiB free two pages each at once).
const maxFreePages = 256

// page returns an index page; its records are written before they are read. With Blocks the
// page is a block of theirs like a slab (records hold no pointer, so any memory will do): the
// index then grows with the data in the memory the data is in, outside Go's heap when the
// broker maps its buffers there, rather than pacing the garbage collector.
func (r *memReuse) page() memIndexPage {
	switch {
	case r != nil && r.blocks != nil:
		b, h := r.blocks.Block(memPage * int(memEntrySize))
		recs := unsafe.Slice((*memEntry)(unsafe.Pointer(unsafe.SliceData(b))), memPage) // cap(b) ≥ the page
		return memIndexPage{recs: recs, hold: h}
	case r != nil:
		r.mu.Lock()
		defer r.mu.Unlock()
		if n := len(r.pages); n > 0 {
			p := r.pages[n-1]
			r.pages[n-1] = nil
			r.pages = r.pages[:n-1]
			return memIndexPage{recs: p}
		}
	}
	return memIndexPage{recs: make([]memEntry, memPage)}
}

// givePage takes back a page its ledger no longer needs.
func (r *memReuse) givePage(p memIndexPage) {
	switch {
	case p.hold != nil:
		p.hold.Release()
	case r == nil || p.recs == nil:
	default:
		r.mu.Lock()
		defer r.mu.Unlock()
		if len(r.pages) < maxFreePages {
			r.pages = append(r.pages, p.recs)
		}
	}
}

// slab returns an empty slab with room for n bytes and its hold (nil: the garbage
// collector's).
func (r *memReuse) slab(n int) ([]byte, Holder) {
	if r == nil || r.blocks == nil {
		return make([]byte, 0, n), nil
	}
	return r.blocks.Block(n)
}

// stored is how many entries the ledger holds.
func (g *memLedger) stored() int64 { return g.n - g.first }

// record returns the index record of entry id, which must be stored.
func (g *memLedger) record(id int64) *memEntry {
	return &g.pages[id/memPage-g.pageBase].recs[id%memPage]
}

// appendEntry stores one entry and returns the memory it newly took (slabs, pages, kept
// buffers and names), for the store's meter. room, when positive, is how many more data bytes
// the ledger takes before it is full: a new slab is no larger than that needs, so that a ledger
// closed at its size does not end on a slab it barely used (a 1 MiB slab for the last few
// entries of a 2 MiB ledger would hold half as much again, empty).
func (g *memLedger) appendEntry(meta Meta, data []byte, hold Holder, room int64) (charged int64) {
	id := g.n
	if id%memPage == 0 {
		g.pages = append(g.pages, g.reuse.page())
		charged += memPage * memEntrySize
	}
	rec := g.record(id)
	*rec = memEntry{
		publish: meta.PublishTime, deliverAt: meta.DeliverAt, seq: meta.SequenceID,
		num: meta.NumMessages, batched: meta.Batched, n: uint32(len(data)),
	}
	rec.producer, charged = g.name(meta.ProducerName, charged)
	charged += g.msgs.add(id, meta.NumMessages)
	if hold != nil || !copies(len(data), len(meta.Key)) {
		rec.direct = true
		rec.ref = uint32(g.heldBase + int64(len(g.held)))
		g.held = append(g.held, memHeld{id: id, data: data, key: meta.Key, hold: hold})
		charged += int64(cap(data)) + int64(len(meta.Key))
	} else {
		need := len(data) + len(meta.Key)
		if len(g.slabs) == 0 || cap(g.slabs[len(g.slabs)-1].b)-len(g.slabs[len(g.slabs)-1].b) < need {
			size := memSlabMin
			if len(g.slabs) > 0 {
				size = min(2*cap(g.slabs[len(g.slabs)-1].b), memSlabMax)
			}
			if room > 0 {
				// The keys' bytes besides; rounded down so that the slab stays a power of two.
				size = min(size, floorPow2(int(min(room, memSlabMax))+memSlabMin))
			}
			// A power of two: the slabs a freed ledger gives back fit the next ledgers' requests
			// (a buffer pool reuses a buffer for its own size only), where sizes cut to each
			// ledger's remaining room would be fresh memory every time.
			size = ceilPow2(max(size, need))
			slab := memSlab{}
			slab.b, slab.hold = g.reuse.slab(size)
			g.slabs = append(g.slabs, slab)
			charged += int64(cap(slab.b))
		}
		s := &g.slabs[len(g.slabs)-1]
		rec.ref = uint32(g.slabBase + int64(len(g.slabs)-1))
		rec.off = uint32(len(s.b))
		rec.keyLen = uint32(len(meta.Key))
		s.b = append(s.b, data...)
		s.b = append(s.b, meta.Key...)
		s.last = id
	}
	g.n++
	g.size += int64(len(data))
	g.written += int64(len(data))
	return charged
}

// name returns the index of producer name p in the ledger's names, adding it if need be.
func (g *memLedger) name(p string, charged int64) (uint32, int64) {
	if i, ok := g.nameIdx[p]; ok {
		return i, charged
	}
	if g.nameIdx == nil {
		g.nameIdx = make(map[string]uint32)
	}
	i := uint32(len(g.names))
	g.names = append(g.names, p)
	g.nameIdx[p] = i
	return i, charged + int64(len(p))
}

// entry returns stored entry id as an Entry, its holder (its buffer's or its slab's) handed
// out as handOut says. Held, its data and key alias the ledger's memory, which is not written
// again while anyone holds it.
func (g *memLedger) entry(id int64, held bool) Entry {
	rec := g.record(id)
	e := Entry{
		Pos: Position{Ledger: g.id, Entry: id},
		Meta: Meta{
			PublishTime: rec.publish, NumMessages: rec.num, Batched: rec.batched, DeliverAt: rec.deliverAt,
			ProducerName: g.names[rec.producer], SequenceID: rec.seq,
		},
	}
	if rec.direct {
		h := &g.held[int64(rec.ref)-g.heldBase]
		e.Data, e.Meta.Key = h.data, h.key
		handOut(&e, h.hold, held)
		return e
	}
	slab := &g.slabs[int64(rec.ref)-g.slabBase]
	b := slab.b
	end := rec.off + rec.n
	e.Data = b[rec.off:end:end] // capped: a caller's append must not write into the slab
	if rec.keyLen > 0 {
		e.Meta.Key = unsafe.String(&b[end], int(rec.keyLen))
	}
	handOut(&e, slab.hold, held)
	return e
}

// dropBefore frees the entries before id (clamped to what is stored) and returns the memory
// it gave back. Slabs and pages go once every entry in them has.
func (g *memLedger) dropBefore(id int64) (freed int64) {
	id = min(id, g.n)
	if id <= g.first {
		return 0
	}
	for e := g.first; e < id; e++ {
		g.size -= int64(g.record(e).n)
	}
	g.first = id
	k := 0
	for k < len(g.held) && g.held[k].id < id {
		h := &g.held[k]
		freed += int64(cap(h.data)) + int64(len(h.key))
		release(h.hold)
		*h = memHeld{}
		k++
	}
	g.held = g.held[k:]
	g.heldBase += int64(k)
	k = 0
	for k < len(g.slabs) && g.slabs[k].last < id {
		freed += int64(cap(g.slabs[k].b))
		release(g.slabs[k].hold)
		g.slabs[k] = memSlab{}
		k++
	}
	g.slabs = g.slabs[k:]
	g.slabBase += int64(k)
	// A page goes once all its ids are dropped (so it is full: id ≤ n).
	k = 0
	for k < len(g.pages) && (g.pageBase+int64(k)+1)*memPage <= id {
		freed += memPage * memEntrySize
		g.reuse.givePage(g.pages[k])
		g.pages[k] = memIndexPage{}
		k++
	}
	g.pages = g.pages[k:]
	g.pageBase += int64(k)
	return freed + g.msgs.dropBefore(id)
}

// num is stored entry id's message count.
func (g *memLedger) num(id int64) int32 { return g.record(id).num }

// messagesBefore counts the messages of the entries before id (first ≤ id ≤ n), the dropped
// ones included.
func (g *memLedger) messagesBefore(id int64) int64 { return g.msgs.before(id, g.num) }

// messages counts the messages of the stored entries from id on.
func (g *memLedger) messages(id int64) int64 {
	return g.msgs.total - g.messagesBefore(max(id, g.first))
}

// free releases every holder the ledger has; the rest is the garbage collector's.
func (g *memLedger) free() {
	for i := range g.held {
		release(g.held[i].hold)
	}
	for i := range g.slabs {
		release(g.slabs[i].hold)
	}
	for _, p := range g.pages {
		g.reuse.givePage(p)
	}
	g.held = nil
	g.slabs = nil
	g.pages = nil
}

// cost is the memory the ledger holds, as charged to the meter.
func (g *memLedger) cost() int64 {
	c := int64(len(g.pages)) * memPage * memEntrySize
	for _, s := range g.slabs {
		c += int64(cap(s.b))
	}
	for _, h := range g.held {
		c += int64(cap(h.data)) + int64(len(h.key))
	}
	for _, n := range g.names {
		c += int64(len(n))
	}
	return c + 8*int64(len(g.msgs.cum))
}

// findByTime returns the id of the first stored entry whose publish time is ≥ ms, g.n if none.
func (g *memLedger) findByTime(ms int64) int64 {
	lo, hi := g.first, g.n
	for lo < hi {
		mid := lo + (hi-lo)/2
		if g.record(mid).publish >= ms {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
