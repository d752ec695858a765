package wire

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// MESSAGE is the command a broker sends most, one per entry it dispatches, and a consumer
// decodes most: encoding and decoding it by reflection was a tenth of a replay's CPU, and as
// much of a broker dispatching single-message entries. The functions below write and read it
// by hand; what they do not expect (unknown fields, a chunked message's first id) goes to
// proto, and the tests hold both directions to proto's bytes and messages.

// appendMessageCommand appends the encoded BaseCommand of a MESSAGE: its type and its
// CommandMessage, which are all a MESSAGE carries. ok is false when m holds something this
// encoder does not write; the caller then uses proto.
func appendMessageCommand(dst []byte, m *pb.CommandMessage) ([]byte, bool) {
	id := m.GetMessageId()
	if m.ConsumerId == nil || id == nil || id.LedgerId == nil || id.EntryId == nil || id.FirstChunkMessageId != nil ||
		len(m.ProtoReflect().GetUnknown()) > 0 || len(id.ProtoReflect().GetUnknown()) > 0 {
		return dst, false
	}
	idSize := sizeVarintField(*id.LedgerId) + sizeVarintField(*id.EntryId) + sizeAckSet(id.AckSet)
	if id.Partition != nil {
		idSize += sizeVarintField(uint64(int64(*id.Partition)))
	}
	if id.BatchIndex != nil {
		idSize += sizeVarintField(uint64(int64(*id.BatchIndex)))
	}
	if id.BatchSize != nil {
		idSize += sizeVarintField(uint64(int64(*id.BatchSize)))
	}
	size := sizeVarintField(*m.ConsumerId) + 1 + protowire.SizeBytes(idSize) + sizeAckSet(m.AckSet)
	if m.RedeliveryCount != nil {
		size += sizeVarintField(uint64(*m.RedeliveryCount))
	}
	if m.ConsumerEpoch != nil {
		size += sizeVarintField(*m.ConsumerEpoch)
	}
	dst = protowire.AppendVarint(protowire.AppendTag(dst, 1, protowire.VarintType), uint64(pb.BaseCommand_MESSAGE))
	dst = protowire.AppendVarint(protowire.AppendTag(dst, 9, protowire.BytesType), uint64(size))
	dst = protowire.AppendVarint(protowire.AppendTag(dst, 1, protowire.VarintType), *m.ConsumerId)
	dst = protowire.AppendVarint(protowire.AppendTag(dst, 2, protowire.BytesType), uint64(idSize))
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
	if m.RedeliveryCount != nil {
		dst = protowire.AppendVarint(protowire.AppendTag(dst, 3, protowire.VarintType), uint64(*m.RedeliveryCount))
	}
	dst = appendAckSet(dst, 4, m.AckSet)
	if m.ConsumerEpoch != nil {
		dst = protowire.AppendVarint(protowire.AppendTag(dst, 5, protowire.VarintType), *m.ConsumerEpoch)
	}
	return dst, true
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

// decodeMessageCommand decodes b into cmd, which must be new (zero), when it is a MESSAGE of
// the fields appendMessageCommand writes (in any order, ack sets packed or not); false leaves
// b to proto.
func decodeMessageCommand(b []byte, cmd *pb.BaseCommand) bool {
	// The type comes first in every encoder we know of; anything else is proto's.
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || num != 1 || typ != protowire.VarintType {
		return false
	}
	t, m := protowire.ConsumeVarint(b[n:])
	if m < 0 || t != uint64(pb.BaseCommand_MESSAGE) {
		return false
	}
	b = b[n+m:]
	num, typ, n = protowire.ConsumeTag(b)
	if n < 0 || num != 9 || typ != protowire.BytesType {
		return false
	}
	body, m := protowire.ConsumeBytes(b[n:])
	if m < 0 || n+m != len(b) {
		return false // more fields, or a second message to merge: proto's
	}
	type block struct {
		cmd                               pb.CommandMessage
		id                                pb.MessageIdData
		consumer, epoch, ledger, entry    uint64
		redeliveries                      uint32
		partition, batchIndex, batchSize  int32
		hasCons, hasID, hasLedger, hasEnt bool
		typ                               pb.BaseCommand_Type
	}
	bl := &block{}
	mc, id := &bl.cmd, &bl.id
	ok := eachField(body, func(num protowire.Number, v uint64, raw []byte) bool {
		switch {
		case num == 1 && raw == nil:
			bl.consumer, mc.ConsumerId, bl.hasCons = v, &bl.consumer, true
		case num == 2 && raw != nil:
			if bl.hasID {
				return false // a repeated message field merges: proto's
			}
			bl.hasID, mc.MessageId = true, id
			return eachField(raw, func(num protowire.Number, v uint64, raw []byte) bool {
				switch {
				case num == 1 && raw == nil:
					bl.ledger, id.LedgerId, bl.hasLedger = v, &bl.ledger, true
				case num == 2 && raw == nil:
					bl.entry, id.EntryId, bl.hasEnt = v, &bl.entry, true
				case num == 3 && raw == nil:
					bl.partition, id.Partition = int32(v), &bl.partition
				case num == 4 && raw == nil:
					bl.batchIndex, id.BatchIndex = int32(v), &bl.batchIndex
				case num == 5:
					return appendInt64s(&id.AckSet, v, raw)
				case num == 6 && raw == nil:
					bl.batchSize, id.BatchSize = int32(v), &bl.batchSize
				default:
					return false
				}
				return true
			})
		case num == 3 && raw == nil:
			bl.redeliveries, mc.RedeliveryCount = uint32(v), &bl.redeliveries
		case num == 4:
			return appendInt64s(&mc.AckSet, v, raw)
		case num == 5 && raw == nil:
			bl.epoch, mc.ConsumerEpoch = v, &bl.epoch
		default:
			return false
		}
		return true
	})
	if !ok || !bl.hasCons || !bl.hasID || !bl.hasLedger || !bl.hasEnt {
		return false // required fields missing: proto says which
	}
	bl.typ = pb.BaseCommand_MESSAGE
	cmd.Type = &bl.typ
	cmd.Message = mc
	return true
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
