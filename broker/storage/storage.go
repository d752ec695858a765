// Package storage holds topic data for the broker: an append-only log of entries per topic
// (per partition). An entry is one SEND as received — headers and payload from the 0x0e01
// magic on — plus the few metadata fields the broker dispatches by, decoded once at append.
//
// Log is what the broker needs of a topic's data and Store what it needs of a whole broker's:
// one Log per topic plus a bucketed Metadata store for cursors, policies and the like. Two
// implementations satisfy both, and one conformance suite holds them to the same behaviour:
//
//   - in memory: NewMemoryStore, which reports the memory it holds (MemoryMeter), of Memory
//     logs, whose ledgers copy small entries into slabs;
//   - durable: OpenFileStore, a data directory of FileLogs and a bbolt metadata store, locked
//     against a second process. A FileLog keeps its entries in segment files, one per ledger
//     (indexed once sealed), written by one writer goroutine with group commit, read through a
//     tail cache or by pread, rebuilt at open, and trimmed a segment at a time with one file
//     kept for reuse. Segment files are opened on demand through the store's bounded cache of
//     descriptors, over FS, which tests use to inject faults (FaultFS).
//
// Both close a ledger and open the next one by the same Rollover policy.
package storage

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// Position identifies an entry: (ledger, entry) as in Pulsar's message ids. Entry −1 means
// "before the first entry of that ledger", which is where a cursor that has consumed nothing sits.
type Position struct {
	Ledger int64
	Entry  int64
}

// Less orders positions by ledger, then entry.
func (p Position) Less(q Position) bool {
	if p.Ledger != q.Ledger {
		return p.Ledger < q.Ledger
	}
	return p.Entry < q.Entry
}

func (p Position) String() string { return fmt.Sprintf("%d:%d", p.Ledger, p.Entry) }

// Meta is what the broker dispatches by; decoded from the MessageMetadata when appended.
type Meta struct {
	PublishTime int64 // ms since epoch
	// NumMessages is the number of messages in the entry (1 unless batched); permits are
	// counted per message.
	NumMessages  int32
	Batched      bool   // num_messages_in_batch was present
	DeliverAt    int64  // deliver_at_time in ms since epoch, 0 if none
	Key          string // ordering key, else partition key: what Key_Shared routes by
	ProducerName string
	SequenceID   uint64
}

// Entry is one stored entry.
type Entry struct {
	Pos  Position
	Meta Meta
	// Data is headersAndPayload from the 0x0e01 magic to the end, exactly as received. Callers
	// must not modify it.
	Data []byte
	// Hold, when not nil, counts who holds Data, whose buffer is reused once nobody does (see
	// Holder). Entries from Read and Get never have one: their data is theirs for good.
	Hold Holder
}

// Copy returns e with its data and key copied and no holder: for keeping an entry read with
// ReadHeld or GetHeld past its Release.
func (e Entry) Copy() Entry {
	e.Data = bytes.Clone(e.Data)
	e.Meta.Key = strings.Clone(e.Meta.Key)
	e.Hold = nil
	return e
}

// A Holder counts the holders of a reusable buffer: the broker reads large frames into pooled
// buffers and stores their payloads without copying. A log holds each entry's buffer from Append
// until the entry is trimmed (or no longer kept in memory); ReadHeld and GetHeld add a holder
// for the caller, who must Release it; Read and Get, whose callers do not count, copy the
// entry's data out of it.
type Holder interface {
	Retain()
	Release()
}

// release releases h if there is one.
func release(h Holder) {
	if h != nil {
		h.Release()
	}
}

// Copier is a Log that copies some entries' data before Append returns and keeps no reference
// to it: for those, the caller may reuse the buffer once Append has returned.
type Copier interface {
	// Copies reports whether an entry of dataLen bytes of data and keyLen of key, appended
	// without a Holder, is copied.
	Copies(dataLen, keyLen int) bool
}

// ErrClosed is returned by a Log used after Close.
var ErrClosed = errors.New("storage: log closed")

// Log is one topic's (or partition's) entries.
//
// Append hands the entry over and calls done once it is durable (for Memory: at once), in
// append order; a caller sends the producer's receipt from done. The log takes over the
// caller's hold of hold (nil: data is the garbage collector's) and releases it when done with
// it, also when the append fails. Read returns entries at or after from, in order; ReadHeld
// and GetHeld are Read and Get for a caller that releases each returned entry's Hold, and
// ReadHeld appends to dst, so that a caller reading entry after entry (a dispatcher) reuses
// one slice. Implementations are safe for concurrent use.
type Log interface {
	Append(meta Meta, data []byte, hold Holder, done func(Position, error))
	Read(from Position, maxEntries int) ([]Entry, error)
	ReadHeld(dst []Entry, from Position, maxEntries int) ([]Entry, error)
	// First is the position of the oldest stored entry; Last of the newest. With no entries,
	// First is Next(Last) and Last is (ledger, −1) of the current ledger.
	First() Position
	Last() Position
	// Next is the position after p.
	Next(p Position) Position
	// Get returns the entry at p.
	Get(p Position) (Entry, bool)
	GetHeld(p Position) (Entry, bool)
	// FindByTime returns the first position whose publish time is ≥ ms (Next(Last) if none).
	FindByTime(ms int64) Position
	// TrimBefore frees the closed ledgers wholly before p (retention decides p), as upstream
	// frees data: a ledger at a time, never the open one. A ledger due to close by time
	// (Rollover.MaxAge) is closed first.
	TrimBefore(p Position)
	// DropBefore frees what it can before p, the open ledger included where the log can: for
	// topics that keep nothing (non-persistent ones). A log on disk frees what TrimBefore does.
	DropBefore(p Position)
	// Roll closes the open ledger if it holds anything, so that TrimBefore may free it, as
	// upstream closes a topic's ledger when it is unloaded. It must not be called from an
	// Append's done callback.
	Roll()
	// Entries and Size count what is stored; EntriesFrom counts the stored entries at or
	// after p.
	Entries() int64
	EntriesFrom(p Position) int64
	Size() int64
	// MessagesFrom counts the messages (each message of a batch one) of the stored entries at
	// or after p, and MessagesBetween those at or after from and before to, without reading
	// an entry: each ledger keeps running totals (msgcount.go).
	MessagesFrom(p Position) int64
	MessagesBetween(from, to Position) int64
	// Ledgers lists the ledgers holding the stored entries, oldest first; the last is the one
	// appends go to, even while it is empty.
	Ledgers() []LedgerInfo
	Close() error
}

// LedgerInfo is one ledger of a log: a segment file, or the in-memory log's one ledger. Its
// stored entries are First … First+Entries−1.
type LedgerInfo struct {
	ID      int64
	First   int64
	Entries int64
	Size    int64
}
