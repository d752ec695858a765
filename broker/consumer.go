package broker

import (
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// consumer is one subscribed consumer on one connection. Its fields are guarded by its
// topic's mutex, except id, conn and topic, which never change.
type consumer struct {
	id    uint64
	name  string
	conn  *conn
	topic *topic
	// sub is set once, by the connection's reader under the topic's mutex, after the consumer
	// is registered on its connection: other goroutines that find it there (conn.close,
	// wroteOut) go through topic, and read sub only with the topic's mutex held.
	sub      *subscription
	priority int32
	since    time.Time
	metadata map[string]string

	permits int64 // messages the client can still take; may go negative after a batch
	unacked int64 // messages delivered and not yet acknowledged
	// blockedOnUnacked is set while it holds its maximum of unacknowledged messages (unacked.go).
	blockedOnUnacked bool
	// epoch is the consumer_epoch the client asked for (Java clients, to fence stale
	// redeliveries); nil when it never sent one, and then MESSAGE carries none either.
	epoch *uint64

	schemaType pb.Schema_Type // what the consumer subscribed with (AutoConsume recorded as such)
	hasSchema  bool
	hashRanges [][2]int32 // Key_Shared STICKY ranges, inclusive
	// readCompacted: the consumer reads the compacted view up to the horizon (compaction_read.go).
	readCompacted bool

	// avgMsgsPerEntry is the messages per entry delivered (admin stats' avgMessagesPerEntry).
	avgMsgsPerEntry movingAvg

	msgOut, bytesOut                int64
	msgAcked                        int64 // messages acknowledged, for the ack rate
	msgRedeliver                    int64 // messages put back for redelivery (admin stats)
	lastAck, lastConsumed, lastFlow time.Time
	closed                          bool
	reachedEnd                      bool // REACHED_END_OF_TOPIC was sent
}

// counters are what the consumer's rates are measured from.
func (cs *consumer) counters() counters {
	return counters{msgs: cs.msgOut, bytes: cs.bytesOut, redeliver: cs.msgRedeliver, acks: cs.msgAcked}
}

// sendMessage writes one MESSAGE for entry data at pos, built in its connection's msg.
func (cs *consumer) sendMessage(pos storage.Position, partition int32, redeliveries uint32, ackSet []int64, data []byte, hold storage.Holder) {
	c := cs.conn
	c.msgMu.Lock()
	defer c.msgMu.Unlock() // deferred: sendHeld panics on a bad command, and the lock must not stay held
	mc := &c.msg
	*mc = messageCmd{typ: pb.BaseCommand_MESSAGE, ledger: uint64(pos.Ledger), entry: uint64(pos.Entry),
		partition: partition, redeliveries: redeliveries}
	mc.id = pb.MessageIdData{LedgerId: &mc.ledger, EntryId: &mc.entry}
	if partition >= 0 {
		mc.id.Partition = &mc.partition
	}
	mc.m = pb.CommandMessage{ConsumerId: &cs.id, MessageId: &mc.id, AckSet: ackSet, ConsumerEpoch: cs.epoch}
	if redeliveries > 0 {
		mc.m.RedeliveryCount = &mc.redeliveries
	}
	mc.base = pb.BaseCommand{Type: &mc.typ, Message: &mc.m}
	c.sendHeld(&mc.base, data, hold)
}

// messageCmd is a MESSAGE command with everything it points to. A connection builds its
// consumers' deliveries in one of its own (the connection encodes a command before send
// returns, or sends a copy later), so that a delivery allocates nothing: on a broker with one
// CPU every garbage collection cycle is felt in every producer's latency.
type messageCmd struct {
	base          pb.BaseCommand
	m             pb.CommandMessage
	id            pb.MessageIdData
	typ           pb.BaseCommand_Type
	ledger, entry uint64
	partition     int32
	redeliveries  uint32
}

// sendCloseConsumer tells the client the broker closed its consumer. allowReconnect=false is
// the PIP-139 extension (field 1000); upstream-compat mode leaves extensions out.
func (c *conn) sendCloseConsumer(id uint64, allowReconnect bool, reason string) {
	cc := &pb.CommandCloseConsumer{ConsumerId: &id, RequestId: ptr(uint64(0))}
	if !c.b.cfg.CompatUpstream {
		if !allowReconnect {
			cc.AllowReconnect = ptr(false)
		}
		if reason != "" {
			cc.Reason = &reason
		}
	}
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_CLOSE_CONSUMER.Enum(), CloseConsumer: cc}, nil)
}

func (c *conn) sendActiveConsumerChange(id uint64, active bool) {
	c.send(&pb.BaseCommand{
		Type:                 pb.BaseCommand_ACTIVE_CONSUMER_CHANGE.Enum(),
		ActiveConsumerChange: &pb.CommandActiveConsumerChange{ConsumerId: &id, IsActive: &active},
	}, nil)
}

// forgetConsumer drops cs from the connection so its id can be subscribed again.
func (c *conn) forgetConsumer(cs *consumer) {
	c.mu.Lock()
	if c.consumers[cs.id] == cs {
		delete(c.consumers, cs.id)
	}
	c.mu.Unlock()
}

func (c *conn) consumer(id uint64) *consumer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.consumers[id]
}
