package client

import (
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// sendOp is one SEND on the wire: a single message or a batch, waiting for its receipt.
type sendOp struct {
	seq     uint64 // sequence id of the (first) message
	n       int    // messages
	batch   bool   // entry is in batch format: ids carry batch indexes
	frame   []byte // the whole SEND frame, re-sent verbatim after a reconnect
	futures []*SendFuture
	created time.Time
}

// batchBuilder accumulates messages of the next batch.
type batchBuilder struct {
	body []byte
	n    int
	// key and orderingKey are the first message's: the batch's metadata carries them.
	key, orderingKey string
	seq              uint64 // sequence id of the first message
	last             uint64 // and of the last: the batch's highest, for deduplication
	futures          []*SendFuture
	created          time.Time
}

func (b *batchBuilder) empty() bool { return b.n == 0 }

// add appends one message; seq is its sequence id.
func (b *batchBuilder) add(m *Message, payload []byte, seq uint64, f *SendFuture) error {
	fields := wire.BatchFields{
		Properties: m.Properties, PartitionKey: m.Key, OrderingKey: m.OrderingKey, SequenceID: seq,
		EventTime: toMillis(m.EventTime),
	}
	body, err := wire.AppendBatchFields(b.body, fields, payload)
	if err != nil {
		return err
	}
	if b.n == 0 {
		b.seq = seq
		b.created = time.Now()
		b.key, b.orderingKey = m.Key, m.OrderingKey
	}
	b.body = body
	b.last = seq
	b.n++
	b.futures = append(b.futures, f)
	return nil
}

func (b *batchBuilder) reset() {
	b.body = b.body[:0]
	if cap(b.body) > 1<<20 {
		b.body = nil
	}
	b.n = 0
	b.key, b.orderingKey = "", ""
	b.futures = nil
}

// sendScratch is what a producer encodes its SENDs with, under its mutex: the frame is all
// that outlives encodeSend. New ones each time (the commands, a single message's metadata, a
// pointer for each scalar) were a fifth of what an unbatched producer and its consumer
// allocated per message.
type sendScratch struct {
	cmd                          pb.BaseCommand
	send                         pb.CommandSend
	meta                         pb.MessageMetadata // a single message's (add)
	typ                          pb.BaseCommand_Type
	producerID, seq, publishTime uint64
	num                          int32
	name                         string
}

// singleMeta returns the scratch's metadata, reset to a single message's of sequence id seq.
func (sc *sendScratch) singleMeta(seq uint64) *pb.MessageMetadata {
	sc.meta = pb.MessageMetadata{}
	sc.seq = seq
	sc.meta.SequenceId = &sc.seq
	return &sc.meta
}

// encodeSend builds the SEND frame for metadata meta and the uncompressed body.
func (p *partitionProducer) encodeSend(meta *pb.MessageMetadata, body []byte, n int) ([]byte, error) {
	sc := &p.enc
	sc.name, sc.publishTime = p.name, uint64(time.Now().UnixMilli())
	meta.ProducerName, meta.PublishTime = &sc.name, &sc.publishTime
	if meta.SchemaVersion == nil && p.schemaVersion != nil {
		meta.SchemaVersion = p.schemaVersion
	}
	payload := body
	if c := p.opts.Compression; c != NoCompression {
		var err error
		payload, err = p.cl.codecs.compress(c, nil, body)
		if err != nil {
			return nil, err
		}
		meta.Compression = pb.CompressionType(c).Enum()
		meta.UncompressedSize = proto.Uint32(uint32(len(body)))
	}
	hpLen := wire.PayloadSize(meta, payload)
	if hpLen-10 > p.maxMessageSize() {
		return nil, ErrMessageTooLarge
	}
	sc.producerID, sc.typ = p.id, pb.BaseCommand_SEND
	sc.send = pb.CommandSend{ProducerId: &sc.producerID, SequenceId: meta.SequenceId, HighestSequenceId: meta.HighestSequenceId}
	if n != 1 {
		sc.num = int32(n)
		sc.send.NumMessages = &sc.num
	}
	sc.cmd = pb.BaseCommand{Type: &sc.typ, Send: &sc.send}
	// The frame's header and SEND take well under sendHeaderRoom bytes.
	return wire.AppendSend(p.spare.take(sendHeaderRoom+hpLen), &sc.cmd, meta, payload, hpLen)
}

// spareFrames are SEND frames whose receipts came, for the next sends to be encoded into. A
// frame is kept unchanged until its receipt, for a reconnect to re-send and for the
// connection, which may queue it as it is (conn.write), to write. A busy producer made one a
// batch's size for every batch: a replay's were a fifth of what it allocated. Once it has
// nothing in flight, at most spareFrameBytes are kept, three full default batches: with its
// batch buffer (up to 1 MiB, batchBuilder.reset) an idle producer holds at most 1.5 MiB, and
// an application pays that for each producer. While sends are in flight, up to
// busySpareFrameBytes are kept: a producer with a window of thousands of messages (a replay's
// 4096) had dozens of batches on their way, kept three of their frames and made a new one for
// nearly every batch, a kilobyte of garbage for every letter of 1 KiB. Guarded by the
// producer's mutex.
type spareFrames struct {
	frames [][]byte
	bytes  int
	busy   bool // kept while sends were in flight: the larger bound holds
}

const (
	spareFrameBytes     = 512 << 10
	busySpareFrameBytes = 8 << 20
)

// bound is what s may hold now.
func (s *spareFrames) bound() int {
	if s.busy {
		return busySpareFrameBytes
	}
	return spareFrameBytes
}

// take returns an empty frame buffer of at least n bytes' capacity.
func (s *spareFrames) take(n int) []byte {
	for i := len(s.frames) - 1; i >= 0; i-- {
		if f := s.frames[i]; cap(f) >= n {
			last := len(s.frames) - 1
			s.frames[i], s.frames[last] = s.frames[last], nil
			s.frames = s.frames[:last]
			s.bytes -= cap(f)
			return f[:0]
		}
	}
	// None fits: the sends outgrew the frames kept. Some go, to make room for this one once it
	// is receipted: frames of the size now asked for take the place of those no longer fitting.
	c := frameCap(n)
	s.dropTo(s.bound() - c)
	return make([]byte, 0, c)
}

// frameCap is the capacity a new frame for n bytes is made with: a sixteenth more, so that it
// fits the producer's later sends too. A producer's frames grow by a byte or two each time its
// sequence ids take a longer varint, and frames made to the byte fitted no later send: the
// spare frames were all too small, and every send made a frame of its own.
func frameCap(n int) int { return (n + n/16 + 63) &^ 63 }

// keep takes back a frame nobody uses any more, if there is room for it; busy says that
// other sends are still in flight. A producer with nothing in flight keeps only
// spareFrameBytes.
func (s *spareFrames) keep(f []byte, busy bool) {
	if s.busy = busy; !busy {
		s.trim()
	}
	if f == nil || s.bytes+cap(f) > s.bound() {
		return
	}
	s.frames = append(s.frames, f)
	s.bytes += cap(f)
}

// trim lets go of the frames over spareFrameBytes, the largest first.
func (s *spareFrames) trim() {
	if s.bytes <= spareFrameBytes {
		return
	}
	slices.SortFunc(s.frames, func(a, b []byte) int { return cap(a) - cap(b) })
	s.dropTo(spareFrameBytes)
}

// dropTo lets go of the last frames until at most n bytes are kept.
func (s *spareFrames) dropTo(n int) {
	for last := len(s.frames) - 1; last >= 0 && s.bytes > n; last-- {
		s.bytes -= cap(s.frames[last])
		s.frames[last] = nil
		s.frames = s.frames[:last]
	}
}

// sendHeaderRoom is what a SEND frame takes before its payload: sizes, type and CommandSend
// (ids, sequence ids, message count: under 64 bytes).
const sendHeaderRoom = 64

// flushBatchLocked turns the current batch into a sendOp and writes it. p.mu is held.
func (p *partitionProducer) flushBatchLocked() {
	b := &p.batch
	if b.empty() {
		return
	}
	meta := &pb.MessageMetadata{
		SequenceId:         proto.Uint64(b.seq),
		NumMessagesInBatch: proto.Int32(int32(b.n)),
		// A deduplicating broker must know the whole range the batch covers, or a batch of
		// explicit (sparse) ids could be taken for a duplicate of an earlier one.
		HighestSequenceId: proto.Uint64(b.last),
	}
	if b.key != "" {
		meta.PartitionKey = proto.String(b.key)
	}
	if b.orderingKey != "" {
		meta.OrderingKey = []byte(b.orderingKey)
	}
	frame, err := p.encodeSend(meta, b.body, b.n)
	futures := b.futures
	op := &sendOp{seq: b.seq, n: b.n, batch: true, frame: frame, futures: futures, created: b.created}
	b.reset()
	if err != nil {
		p.failOp(op, err)
		return
	}
	p.enqueueLocked(op)
}

// enqueueLocked appends op to the pending queue and writes it if connected. p.mu is held.
func (p *partitionProducer) enqueueLocked(op *sendOp) {
	p.pending = append(p.pending, op)
	if p.cnx != nil {
		// An error means the connection is closing: the reconnect re-sends op.
		p.cnx.write(op.frame)
	}
}
