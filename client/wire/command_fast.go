package wire

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// MESSAGE, SEND and SEND_RECEIPT are the commands that come once per entry: a broker decodes
// a SEND and encodes a receipt and a MESSAGE for each, a client the other way round. Encoding
// and decoding them by reflection was a tenth of a replay's CPU, and as much of a broker
// serving single-message entries. The functions below write and read them by hand; what they
// do not expect (unknown fields, a chunked message's first id, a command carrying more than
// its own message) goes to proto, and the tests hold both directions to proto's bytes and
// messages. A broker also decodes ACK by hand (decodeAck), the command a consumer's grouping
// sends for up to a thousand messages: by reflection each of its message ids was an allocation.

// appendFastCommand appends the encoded cmd when it is one of the commands above: its type and
// its own message, which are all such a command carries. ok is false when cmd is another
// command or holds something these encoders do not write; the caller then uses proto.
func appendFastCommand(dst []byte, cmd *pb.BaseCommand) ([]byte, bool) {
	var body encFields
	switch t := cmd.GetType(); {
	case t == pb.BaseCommand_MESSAGE && cmd.Message != nil:
		m := cmd.Message
		if m.ConsumerId == nil || len(m.ProtoReflect().GetUnknown()) > 0 {
			return dst, false
		}
		body = encFields{
			{num: 1, v: m.ConsumerId}, {num: 2, id: m.MessageId, required: true},
			{num: 3, v32: m.RedeliveryCount}, {num: 4, list: m.AckSet}, {num: 5, v: m.ConsumerEpoch},
		}
	case t == pb.BaseCommand_SEND && cmd.Send != nil:
		s := cmd.Send
		if s.ProducerId == nil || s.SequenceId == nil || len(s.ProtoReflect().GetUnknown()) > 0 {
			return dst, false
		}
		body = encFields{
			{num: 1, v: s.ProducerId}, {num: 2, v: s.SequenceId}, {num: 3, i32: s.NumMessages},
			{num: 4, v: s.TxnidLeastBits}, {num: 5, v: s.TxnidMostBits}, {num: 6, v: s.HighestSequenceId},
			{num: 7, b: s.IsChunk}, {num: 8, b: s.Marker}, {num: 9, id: s.MessageId},
		}
	case t == pb.BaseCommand_SEND_RECEIPT && cmd.SendReceipt != nil:
		r := cmd.SendReceipt
		if r.ProducerId == nil || r.SequenceId == nil || len(r.ProtoReflect().GetUnknown()) > 0 {
			return dst, false
		}
		body = encFields{{num: 1, v: r.ProducerId}, {num: 2, v: r.SequenceId}, {num: 3, id: r.MessageId}, {num: 4, v: r.HighestSequenceId}}
	default:
		return dst, false
	}
	if len(cmd.ProtoReflect().GetUnknown()) > 0 {
		return dst, false
	}
	size, ok := body.size()
	if !ok {
		return dst, false
	}
	t := cmd.GetType()
	dst = protowire.AppendVarint(protowire.AppendTag(dst, 1, protowire.VarintType), uint64(t))
	dst = protowire.AppendVarint(protowire.AppendTag(dst, protowire.Number(t), protowire.BytesType), uint64(size))
	return body.append(dst), true
}

// encField is one field of a command's message to encode; exactly one of its values is set, or
// none (absent).
type encField struct {
	num      protowire.Number
	v        *uint64
	v32      *uint32
	i32      *int32
	b        *bool
	list     []int64
	id       *pb.MessageIdData
	required bool // id must be present
}

type encFields []encField

// size is the encoded size of fs; false when a message id cannot be encoded by hand.
func (fs encFields) size() (int, bool) {
	n := 0
	for _, f := range fs {
		switch {
		case f.v != nil:
			n += sizeVarintField(*f.v)
		case f.v32 != nil:
			n += sizeVarintField(uint64(*f.v32))
		case f.i32 != nil:
			n += sizeVarintField(uint64(int64(*f.i32)))
		case f.b != nil:
			n += 2
		case f.list != nil:
			n += sizeAckSet(f.list)
		case f.id != nil:
			s, ok := sizeMessageID(f.id)
			if !ok {
				return 0, false
			}
			n += 1 + protowire.SizeBytes(s)
		case f.required:
			return 0, false // proto says what is missing
		}
	}
	return n, true
}

func (fs encFields) append(dst []byte) []byte {
	for _, f := range fs {
		switch {
		case f.v != nil:
			dst = protowire.AppendVarint(protowire.AppendTag(dst, f.num, protowire.VarintType), *f.v)
		case f.v32 != nil:
			dst = protowire.AppendVarint(protowire.AppendTag(dst, f.num, protowire.VarintType), uint64(*f.v32))
		case f.i32 != nil:
			dst = protowire.AppendVarint(protowire.AppendTag(dst, f.num, protowire.VarintType), uint64(int64(*f.i32)))
		case f.b != nil:
			dst = protowire.AppendVarint(protowire.AppendTag(dst, f.num, protowire.VarintType), protowire.EncodeBool(*f.b))
		case f.list != nil:
			dst = appendAckSet(dst, f.num, f.list)
		case f.id != nil:
			s, _ := sizeMessageID(f.id)
			dst = appendMessageID(protowire.AppendVarint(protowire.AppendTag(dst, f.num, protowire.BytesType), uint64(s)), f.id)
		}
	}
	return dst
}

// sizeMessageID is the encoded size of id; false when it holds what appendMessageID does not
// write (a first chunk id, unknown fields) or lacks a required field.
func sizeMessageID(id *pb.MessageIdData) (int, bool) {
	if id.LedgerId == nil || id.EntryId == nil || id.FirstChunkMessageId != nil || len(id.ProtoReflect().GetUnknown()) > 0 {
		return 0, false
	}
	n := sizeVarintField(*id.LedgerId) + sizeVarintField(*id.EntryId) + sizeAckSet(id.AckSet)
	for _, v := range []*int32{id.Partition, id.BatchIndex, id.BatchSize} {
		if v != nil {
			n += sizeVarintField(uint64(int64(*v)))
		}
	}
	return n, true
}

func appendMessageID(dst []byte, id *pb.MessageIdData) []byte {
	dst = protowire.AppendVarint(protowire.AppendTag(dst, 1, protowire.VarintType), *id.LedgerId)
	dst = protowire.AppendVarint(protowire.AppendTag(dst, 2, protowire.VarintType), *id.EntryId)
	if id.Partition != nil {
		dst = protowire.AppendVarint(protowire.AppendTag(dst, 3, protowire.VarintType), uint64(int64(*id.Partition)))
	}
	if id.BatchIndex != nil {
		dst = protowire.AppendVarint(protowire.AppendTag(dst, 4, protowire.VarintType), uint64(int64(*id.BatchIndex)))
	}
	dst = appendAckSet(dst, 5, id.AckSet)
	if id.BatchSize != nil {
		dst = protowire.AppendVarint(protowire.AppendTag(dst, 6, protowire.VarintType), uint64(int64(*id.BatchSize)))
	}
	return dst
}

// sizeVarintField is the size of a varint field of a number under 16 (one-byte tag).
func sizeVarintField(v uint64) int { return 1 + protowire.SizeVarint(v) }

// sizeAckSet is the size of a repeated int64 field, which proto2 writes unpacked.
func sizeAckSet(s []int64) int {
	n := 0
	for _, v := range s {
		n += sizeVarintField(uint64(v))
	}
	return n
}

func appendAckSet(dst []byte, num protowire.Number, s []int64) []byte {
	for _, v := range s {
		dst = protowire.AppendVarint(protowire.AppendTag(dst, num, protowire.VarintType), uint64(v))
	}
	return dst
}

// leadingType reads the type field an encoded BaseCommand starts with, as every encoder we know
// of writes it: the type and the bytes it took; ok is false when b starts otherwise.
func leadingType(b []byte) (t uint64, n int, ok bool) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || num != 1 || typ != protowire.VarintType {
		return 0, 0, false
	}
	t, m := protowire.ConsumeVarint(b[n:])
	if m < 0 {
		return 0, 0, false
	}
	return t, n + m, true
}

// fastBlocks is where decodeFastCommand decodes the commands it reuses memory for: a MESSAGE
// or a SEND_RECEIPT into scratch's blocks (a client's Scratch), a SEND into send and an ACK into
// ack (a broker's Reader). A nil block means new memory, except for ack: an ACK is proto's then.
type fastBlocks struct {
	scratch *Scratch
	send    *sendBlock
	ack     *ackBlock
}

// decodeFastCommand decodes b into cmd, which must be new (zero), when it is one of the
// commands above made of the fields their encoders write (in any order, ack sets packed or
// not), into the blocks into says; false leaves b to proto.
func decodeFastCommand(b []byte, cmd *pb.BaseCommand, into fastBlocks) bool {
	// The type comes first in every encoder we know of; anything else is proto's.
	t, n, ok := leadingType(b)
	if !ok || t > 1<<16 {
		return false
	}
	b = b[n:]
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || uint64(num) != t || typ != protowire.BytesType {
		return false
	}
	body, m := protowire.ConsumeBytes(b[n:])
	if m < 0 || n+m != len(b) {
		return false // more fields, or a second message to merge: proto's
	}
	s := into.scratch
	switch pb.BaseCommand_Type(t) {
	case pb.BaseCommand_MESSAGE:
		// A block is made only without a scratch: new(messageBlock) before the test escaped,
		// and every MESSAGE a client read allocated one it did not use.
		var bl *messageBlock
		if s != nil {
			bl = &s.message
			*bl = messageBlock{}
		} else {
			bl = new(messageBlock)
		}
		return decodeMessage(body, cmd, bl)
	case pb.BaseCommand_SEND:
		sb := into.send
		if sb == nil {
			sb = new(sendBlock)
		} else {
			*sb = sendBlock{}
		}
		return decodeSend(body, cmd, sb)
	case pb.BaseCommand_SEND_RECEIPT:
		var bl *receiptBlock
		if s != nil {
			bl = &s.receipt
			*bl = receiptBlock{}
		} else {
			bl = new(receiptBlock)
		}
		return decodeSendReceipt(body, cmd, bl)
	case pb.BaseCommand_ACK:
		return into.ack != nil && decodeAck(body, cmd, into.ack)
	}
	return false
}

// idBlock holds a decoded MessageIdData and its scalars, in one allocation with its command.
type idBlock struct {
	id                               pb.MessageIdData
	ledger, entry                    uint64
	partition, batchIndex, batchSize int32
	present                          bool
}

// decode decodes raw into the block; false when raw is not what appendMessageID writes, or
// the id was already there (proto would merge the two).
func (ib *idBlock) decode(raw []byte) bool {
	if ib.present {
		return false
	}
	ib.present = true
	id := &ib.id
	var ledger, entry bool
	ok := eachField(raw, func(num protowire.Number, v uint64, raw []byte) bool {
		switch {
		case num == 1 && raw == nil:
			ib.ledger, id.LedgerId, ledger = v, &ib.ledger, true
		case num == 2 && raw == nil:
			ib.entry, id.EntryId, entry = v, &ib.entry, true
		case num == 3 && raw == nil:
			ib.partition, id.Partition = int32(v), &ib.partition
		case num == 4 && raw == nil:
			ib.batchIndex, id.BatchIndex = int32(v), &ib.batchIndex
		case num == 5:
			return appendInt64s(&id.AckSet, v, raw)
		case num == 6 && raw == nil:
			ib.batchSize, id.BatchSize = int32(v), &ib.batchSize
		default:
			return false
		}
		return true
	})
	return ok && ledger && entry // required: proto says which is missing
}

// messageBlock holds a decoded CommandMessage and its scalars, in one allocation (or a
// Scratch).
type messageBlock struct {
	m            pb.CommandMessage
	id           idBlock
	consumer, ep uint64
	redeliveries uint32
	hasConsumer  bool
	typ          pb.BaseCommand_Type
}

// decodeMessage decodes body into bl, which must be zero, and sets cmd's type and message to it.
func decodeMessage(body []byte, cmd *pb.BaseCommand, bl *messageBlock) bool {
	m := &bl.m
	ok := eachField(body, func(num protowire.Number, v uint64, raw []byte) bool {
		switch {
		case num == 1 && raw == nil:
			bl.consumer, m.ConsumerId, bl.hasConsumer = v, &bl.consumer, true
		case num == 2 && raw != nil:
			m.MessageId = &bl.id.id
			return bl.id.decode(raw)
		case num == 3 && raw == nil:
			bl.redeliveries, m.RedeliveryCount = uint32(v), &bl.redeliveries
		case num == 4:
			return appendInt64s(&m.AckSet, v, raw)
		case num == 5 && raw == nil:
			bl.ep, m.ConsumerEpoch = v, &bl.ep
		default:
			return false
		}
		return true
	})
	if !ok || !bl.hasConsumer || !bl.id.present {
		return false
	}
	bl.typ = pb.BaseCommand_MESSAGE
	cmd.Type, cmd.Message = &bl.typ, m
	return true
}

// sendBlock holds a decoded CommandSend and its scalars, in one allocation (or a Reader's:
// ReuseSendCommands).
type sendBlock struct {
	s                                    pb.CommandSend
	id                                   idBlock
	producer, seq, txnLow, txnHigh, high uint64
	num                                  int32
	chunk, marker, hasProducer, hasSeq   bool
	typ                                  pb.BaseCommand_Type
}

// decodeSend decodes body into bl, which must be zero, and sets cmd's type and send to it.
func decodeSend(body []byte, cmd *pb.BaseCommand, bl *sendBlock) bool {
	s := &bl.s
	ok := eachField(body, func(num protowire.Number, v uint64, raw []byte) bool {
		if num == 9 && raw != nil {
			s.MessageId = &bl.id.id
			return bl.id.decode(raw)
		}
		if raw != nil {
			return false
		}
		switch num {
		case 1:
			bl.producer, s.ProducerId, bl.hasProducer = v, &bl.producer, true
		case 2:
			bl.seq, s.SequenceId, bl.hasSeq = v, &bl.seq, true
		case 3:
			bl.num, s.NumMessages = int32(v), &bl.num
		case 4:
			bl.txnLow, s.TxnidLeastBits = v, &bl.txnLow
		case 5:
			bl.txnHigh, s.TxnidMostBits = v, &bl.txnHigh
		case 6:
			bl.high, s.HighestSequenceId = v, &bl.high
		case 7:
			bl.chunk, s.IsChunk = v != 0, &bl.chunk
		case 8:
			bl.marker, s.Marker = v != 0, &bl.marker
		default:
			return false
		}
		return true
	})
	if !ok || !bl.hasProducer || !bl.hasSeq {
		return false
	}
	bl.typ = pb.BaseCommand_SEND
	cmd.Type, cmd.Send = &bl.typ, s
	return true
}

// receiptBlock holds a decoded CommandSendReceipt and its scalars, in one allocation (or a
// Scratch).
type receiptBlock struct {
	r                   pb.CommandSendReceipt
	id                  idBlock
	producer, seq, high uint64
	hasProducer, hasSeq bool
	typ                 pb.BaseCommand_Type
}

// decodeSendReceipt decodes body into bl, which must be zero, and sets cmd's type and receipt
// to it.
func decodeSendReceipt(body []byte, cmd *pb.BaseCommand, bl *receiptBlock) bool {
	r := &bl.r
	ok := eachField(body, func(num protowire.Number, v uint64, raw []byte) bool {
		switch {
		case num == 1 && raw == nil:
			bl.producer, r.ProducerId, bl.hasProducer = v, &bl.producer, true
		case num == 2 && raw == nil:
			bl.seq, r.SequenceId, bl.hasSeq = v, &bl.seq, true
		case num == 3 && raw != nil:
			r.MessageId = &bl.id.id
			return bl.id.decode(raw)
		case num == 4 && raw == nil:
			bl.high, r.HighestSequenceId = v, &bl.high
		default:
			return false
		}
		return true
	})
	if !ok || !bl.hasProducer || !bl.hasSeq {
		return false
	}
	bl.typ = pb.BaseCommand_SEND_RECEIPT
	cmd.Type, cmd.SendReceipt = &bl.typ, r
	return true
}

// ackBlock is where a broker's Reader decodes every ACK: the command, its message ids and their
// scalars, the same memory from one ACK to the next (ReuseAckCommands).
type ackBlock struct {
	a                                    pb.CommandAck
	consumer, txnLow, txnHigh, requestID uint64
	ackType                              pb.CommandAck_AckType
	validation                           pb.CommandAck_ValidationError
	hasConsumer, hasType                 bool
	typ                                  pb.BaseCommand_Type
	ids                                  []idBlock
	ptrs                                 []*pb.MessageIdData
}

// maxKeptAckIDs bounds the message ids an ackBlock keeps room for between ACKs: a client's
// ACKs carry up to its grouping's 1,000; a rare larger one is decoded into memory of its own.
const maxKeptAckIDs = 4096

// decodeAck decodes body into bl and sets cmd's type and ack to it. An ACK with properties
// (transactions' ack properties) or a value its enums do not name is left to proto.
func decodeAck(body []byte, cmd *pb.BaseCommand, bl *ackBlock) bool {
	// The ids first counted, so that their blocks, which point into themselves, never move.
	n := 0
	if !eachField(body, func(num protowire.Number, _ uint64, raw []byte) bool {
		if num == 3 && raw != nil {
			n++
		}
		return true
	}) {
		return false
	}
	ids, ptrs := bl.ids, bl.ptrs
	if cap(ids) < n || cap(ids) > maxKeptAckIDs {
		ids, ptrs = make([]idBlock, 0, n), make([]*pb.MessageIdData, 0, n)
	}
	*bl = ackBlock{ids: ids[:0], ptrs: ptrs[:0]}
	a := &bl.a
	ok := eachField(body, func(num protowire.Number, v uint64, raw []byte) bool {
		if raw != nil {
			if num != 3 {
				return false
			}
			bl.ids = append(bl.ids, idBlock{})
			ib := &bl.ids[len(bl.ids)-1]
			bl.ptrs = append(bl.ptrs, &ib.id)
			return ib.decode(raw)
		}
		switch num {
		case 1:
			bl.consumer, a.ConsumerId, bl.hasConsumer = v, &bl.consumer, true
		case 2:
			if !named(pb.CommandAck_AckType_name, v) {
				return false
			}
			bl.ackType, a.AckType, bl.hasType = pb.CommandAck_AckType(v), &bl.ackType, true
		case 4:
			if !named(pb.CommandAck_ValidationError_name, v) {
				return false
			}
			bl.validation, a.ValidationError = pb.CommandAck_ValidationError(v), &bl.validation
		case 6:
			bl.txnLow, a.TxnidLeastBits = v, &bl.txnLow
		case 7:
			bl.txnHigh, a.TxnidMostBits = v, &bl.txnHigh
		case 8:
			bl.requestID, a.RequestId = v, &bl.requestID
		default:
			return false
		}
		return true
	})
	if !ok || !bl.hasConsumer || !bl.hasType {
		return false
	}
	if len(bl.ptrs) > 0 {
		a.MessageId = bl.ptrs
	}
	bl.typ = pb.BaseCommand_ACK
	cmd.Type, cmd.Ack = &bl.typ, a
	return true
}

// named reports whether varint v is a value of the enum whose names are names: proto keeps any
// other value among a message's unknown fields, which only proto's decoding reproduces.
func named(names map[int32]string, v uint64) bool {
	_, ok := names[int32(v)]
	return ok && v <= math.MaxInt32
}

// eachField calls f for every field of b: a varint as v (raw nil), a length-delimited one as
// raw. False when b is malformed, holds other wire types, or f said no.
func eachField(b []byte, f func(num protowire.Number, v uint64, raw []byte) bool) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 || !f(num, v, nil) {
				return false
			}
			b = b[m:]
		case protowire.BytesType:
			raw, m := protowire.ConsumeBytes(b)
			if m < 0 || !f(num, 0, raw) {
				return false
			}
			b = b[m:]
		default:
			return false
		}
	}
	return true
}

// appendInt64s adds to a repeated int64 field one varint v (raw nil) or a packed run raw.
func appendInt64s(s *[]int64, v uint64, raw []byte) bool {
	if raw == nil {
		*s = append(*s, int64(v))
		return true
	}
	for len(raw) > 0 {
		x, m := protowire.ConsumeVarint(raw)
		if m < 0 {
			return false
		}
		*s = append(*s, int64(x))
		raw = raw[m:]
	}
	return true
}
