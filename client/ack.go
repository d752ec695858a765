package client

import (
	"context"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// batchAcks tracks which messages of one batch entry the application acknowledged.
type batchAcks struct {
	mu      sync.Mutex
	unacked []int64 // bit i set = message i not yet acknowledged (ack_set convention)
	left    int
	size    int
}

func newBatchAcks(n int) *batchAcks {
	b := &batchAcks{unacked: make([]int64, (n+63)/64), left: n, size: n}
	for i := range n {
		b.unacked[i/64] |= 1 << (uint(i) % 64)
	}
	return b
}

// ack marks message i acknowledged and reports whether the whole batch now is.
func (b *batchAcks) ack(i int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i >= 0 && i < b.size && b.unacked[i/64]&(1<<(uint(i)%64)) != 0 {
		b.unacked[i/64] &^= 1 << (uint(i) % 64)
		b.left--
	}
	return b.left == 0
}

// ackUpTo marks messages 0..i acknowledged (cumulative) and reports whether all are.
func (b *batchAcks) ackUpTo(i int) bool {
	for j := 0; j <= i; j++ {
		b.ack(j)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left == 0
}

func (b *batchAcks) ackSet() []int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int64(nil), b.unacked...)
}

type entryKey struct{ ledger, entry int64 }

// ackTracker groups acknowledgements of one partition consumer: individual ids (with an
// ack_set for partially acknowledged batches) and the latest cumulative position. They are
// flushed by the parent's ticker every AckGroupingTime, when AckGroupingMaxSize ids are
// waiting, or on demand.
type ackTracker struct {
	pc         *partitionConsumer
	mu         sync.Mutex
	individual map[entryKey][]int64 // nil ack_set = whole entry
	cumulative *pb.MessageIdData
}

func (t *ackTracker) init(pc *partitionConsumer) {
	t.pc = pc
	t.individual = make(map[entryKey][]int64)
}

// add records an acknowledgement of m (cumulative when cum). The caller flushes if asked.
func (t *ackTracker) add(m *Message, cum bool) (flushNow bool) {
	o := &t.pc.parent.opts
	key := entryKey{m.ID.Ledger, m.ID.Entry}
	t.mu.Lock()
	defer t.mu.Unlock()
	if cum {
		id := &pb.MessageIdData{LedgerId: proto.Uint64(uint64(m.ID.Ledger)), EntryId: proto.Uint64(uint64(m.ID.Entry))}
		if m.batch != nil && !m.batch.ackUpTo(int(m.ID.BatchIndex)) {
			if o.EnableBatchIndexAck {
				id.AckSet = m.batch.ackSet()
			} else {
				// The entry is not done: acknowledge up to the one before it, as upstream.
				if m.ID.Entry == 0 {
					return false
				}
				id.EntryId = proto.Uint64(uint64(m.ID.Entry - 1))
			}
		}
		t.cumulative = id
		return o.AckGroupingTime < 0
	}
	if m.batch != nil && !m.batch.ack(int(m.ID.BatchIndex)) {
		if !o.EnableBatchIndexAck {
			return false
		}
		t.individual[key] = m.batch.ackSet()
	} else {
		t.individual[key] = nil
	}
	return o.AckGroupingTime < 0 || len(t.individual) >= o.AckGroupingMaxSize
}

// take removes and returns what is waiting, as ACK commands.
func (t *ackTracker) take(withRequest bool) []*pb.BaseCommand {
	t.mu.Lock()
	defer t.mu.Unlock()
	var cmds []*pb.BaseCommand
	if n := len(t.individual); n > 0 {
		// In three blocks rather than three allocations an id: a replay acknowledges every
		// letter on its own.
		ids, vals, nums := make([]*pb.MessageIdData, 0, n), make([]pb.MessageIdData, n), make([]uint64, 2*n)
		i := 0
		for k, set := range t.individual {
			nums[2*i], nums[2*i+1] = uint64(k.ledger), uint64(k.entry)
			vals[i] = pb.MessageIdData{LedgerId: &nums[2*i], EntryId: &nums[2*i+1], AckSet: set}
			ids = append(ids, &vals[i])
			i++
		}
		clear(t.individual)
		cmds = append(cmds, &pb.BaseCommand{Type: pb.BaseCommand_ACK.Enum(), Ack: &pb.CommandAck{
			ConsumerId: proto.Uint64(t.pc.id), AckType: pb.CommandAck_Individual.Enum(), MessageId: ids}})
	}
	if t.cumulative != nil {
		cmds = append(cmds, &pb.BaseCommand{Type: pb.BaseCommand_ACK.Enum(), Ack: &pb.CommandAck{
			ConsumerId: proto.Uint64(t.pc.id), AckType: pb.CommandAck_Cumulative.Enum(), MessageId: []*pb.MessageIdData{t.cumulative}}})
		t.cumulative = nil
	}
	return cmds
}

// flush sends what is waiting without waiting for an answer. Acks taken while the consumer
// is reconnecting are dropped: the broker redelivers those messages, as upstream.
func (t *ackTracker) flush() {
	cmds := t.take(false)
	if len(cmds) == 0 {
		return
	}
	if c := t.pc.conn(); c != nil {
		for _, cmd := range cmds {
			c.writeCmd(cmd)
		}
	}
}

// flushWait sends what is waiting with request ids and waits for the broker's ACK_RESPONSE.
func (t *ackTracker) flushWait(ctx context.Context) error {
	for _, cmd := range t.take(true) {
		resp, err := t.pc.request(ctx, cmd)
		if err != nil {
			return err
		}
		if ar := resp.GetAckResponse(); ar != nil && ar.GetMessage() != "" {
			return serverError(ar.GetError(), ar.GetMessage())
		}
	}
	return nil
}
