package broker

import (
	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// The memory budget of in-memory data (Config.MemoryLimit, `--memory-limit`). An in-memory
// broker keeps every unacknowledged message in the process, so a producer whose consumers do
// not keep up would otherwise grow it until the kernel kills it. Past the budget, every
// persistent topic behaves as upstream's topics do past their backlog quota, by
// backlogQuotaDefaultRetentionPolicy:
//
//   - producer_request_hold: the topic's producers are disconnected (CLOSE_PRODUCER, reconnect
//     allowed) and new ones refused with ProducerBlockedQuotaExceededError, which clients
//     retry: their sends wait (and time out client-side) until consumers free memory.
//   - producer_exception: the same, refused with ProducerBlockedQuotaExceededException, on
//     which clients fail their pending sends with it.
//   - consumer_backlog_eviction: upstream drops the slowest subscriptions' oldest messages.
//     Under the memory budget letterbox holds producers back as producer_request_hold does
//     instead (docs/protocol.md): a memory budget is the process's, not one topic's, and
//     dropping the backlog of topics other than the one growing would surprise more.
//
// The SEND that finds the budget spent is not stored and gets no receipt: its producer is
// closed, and the client sends it again once it has a producer again, as after any
// reconnection. Non-persistent topics keep nothing and are never held back. Stores that keep
// data on disk are not budgeted. The backlog quotas of namespaces and topics (limits per
// topic) are backlog_quota.go's; both refuse producers with quotaMessage.

// quotaMessage is upstream's message for a producer refused over quota.
const quotaMessage = "Cannot create producer on topic with backlog quota exceeded"

// memoryMeter returns the store's meter when the broker budgets its memory.
func (b *Broker) memoryMeter() storage.MemoryMeter {
	if b.cfg.MemoryLimit <= 0 {
		return nil
	}
	m, _ := b.store.(storage.MemoryMeter)
	return m
}

// quotaExceeded reports whether t is held back by the broker's memory budget: whether it is a
// persistent topic of a broker over that budget (a topic's own backlog quota is checked by
// overQuota, backlog_quota.go). The first call to see the budget spent, and the first to see
// it back, log it.
func (t *topic) quotaExceeded() bool {
	b := t.b
	if !t.name.Persistent || b.meter == nil {
		return false
	}
	inUse := b.meter.MemoryInUse()
	over := inUse >= b.cfg.MemoryLimit
	if over != b.overBudget.Load() && b.overBudget.CompareAndSwap(!over, over) {
		if over {
			b.log.Warn("memory budget reached: producers are held back (backlog quota)",
				"in_use", inUse, "limit", b.cfg.MemoryLimit, "policy", b.cfg.BacklogQuotaDefaultRetentionPolicy)
		} else {
			b.log.Info("memory back under its budget: producers are accepted again", "in_use", inUse, "limit", b.cfg.MemoryLimit)
		}
	}
	return over
}

// quotaRefusal is the answer to a PRODUCER on a topic over its quota, as upstream's.
func (t *topic) quotaRefusal() *serverError {
	code := pb.ServerError_ProducerBlockedQuotaExceededError
	if t.b.cfg.BacklogQuotaDefaultRetentionPolicy == policy.QuotaProducerException {
		code = pb.ServerError_ProducerBlockedQuotaExceededException
	}
	return errorf(code, quotaMessage)
}

// holdProducers disconnects t's producers because t is over its quota; they may reconnect,
// and are refused while it lasts. Called with t.mu held.
func (t *topic) holdProducers() {
	t.b.closeTopicProducers(t, true, "backlog quota exceeded")
}

// StoredBytes splits the data bytes the open persistent topics store: backlog is what their
// subscriptions still need (each topic's estimated backlog size, after its slowest
// subscription's mark-delete position, as its stats report it); acknowledged is the rest,
// which no subscription needs (every one acknowledged it, or the topic has none) and which is
// kept until its ledger is freed, as retention and rollover say. For the admin API's metrics:
// memory that acknowledged data holds, apart from the backlog.
func (b *Broker) StoredBytes() (acknowledged, backlog int64) {
	for t := range b.topics.sweep() {
		if !t.name.Persistent {
			continue
		}
		t.locked(func() {
			size, bl := t.log.Size(), t.estimatedBacklogSize()
			backlog += bl
			acknowledged += max(size-bl, 0)
		})
	}
	return acknowledged, backlog
}

// OffHeapBytes is the memory of the frame buffers mapped outside Go's heap that the broker holds
// (in use or idle): stored data that Go's heap statistics do not count
// (Config.FrameBuffersOffHeap). For the admin API's metrics.
func (b *Broker) OffHeapBytes() int64 { return b.bufs.OffHeap() }

// MemoryBudget reports what the in-memory store holds (0 for a store on disk) and the budget
// it is held to (0: none, as for a store on disk whatever Config.MemoryLimit says), for the
// admin API's metrics.
func (b *Broker) MemoryBudget() (inUse, limit int64) {
	if m, ok := b.store.(storage.MemoryMeter); ok {
		inUse = m.MemoryInUse()
	}
	if b.meter != nil {
		limit = b.cfg.MemoryLimit
	}
	return inUse, limit
}

// estimatedBacklogSize is upstream's estimatedBacklogSize: the bytes stored after the slowest
// subscription's mark-delete position (0 without subscriptions). As upstream it counts the
// ledgers after that position's ledger whole and estimates the rest of its ledger from the
// ledger's average entry size. Called with t.mu held.
func (t *topic) estimatedBacklogSize() int64 {
	if len(t.subs) == 0 {
		return 0
	}
	var slowest storage.Position
	first := true
	for _, s := range t.subs {
		if first || s.markDelete.Less(slowest) {
			slowest, first = s.markDelete, false
		}
	}
	return t.sizeAfter(slowest) // compaction_trigger.go
}
