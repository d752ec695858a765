package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// ErrBadBatch means a batch body does not hold the messages its metadata announces. Unlike the
// frame errors it says nothing about the connection: the frame around it was sound.
var ErrBadBatch = errors.New("wire: malformed batch")

// BatchMessage is one message of a batch.
type BatchMessage struct {
	Meta *pb.SingleMessageMetadata
	// Payload aliases the batch body it was parsed from.
	Payload []byte
}

// ParseBatch splits the (decompressed) body of a batch entry into its n messages, n being the
// entry's MessageMetadata.num_messages_in_batch. Each message is
//
//	[metaSize u32][SingleMessageMetadata][payload_size bytes]
//
// Bytes after the n-th message are ignored, as the official Go client ignores them.
func ParseBatch(payload []byte, n int) ([]BatchMessage, error) { return parseBatch(payload, n, nil) }

func parseBatch(payload []byte, n int, strs *Strings) ([]BatchMessage, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: %d messages", ErrBadBatch, n)
	}
	// n comes from the peer; the smallest message (empty payload) takes 6 bytes, so do not let a
	// large n allocate more than the body could hold.
	msgs := make([]BatchMessage, 0, min(n, len(payload)/6))
	rest := payload
	for i := range n {
		if len(rest) < 4 {
			return nil, fmt.Errorf("%w: message %d of %d: %d bytes left, no room for its size", ErrBadBatch, i, n, len(rest))
		}
		metaSize := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(metaSize) > uint64(len(rest)) {
			return nil, fmt.Errorf("%w: message %d of %d: metadata of %d bytes, %d left", ErrBadBatch, i, n, metaSize, len(rest))
		}
		meta := &pb.SingleMessageMetadata{}
		if err := unmarshalSingleMetadata(rest[:metaSize], meta, strs); err != nil {
			return nil, fmt.Errorf("%w: message %d of %d: %w", ErrBadBatch, i, n, err)
		}
		rest = rest[metaSize:]
		size := meta.GetPayloadSize()
		if size < 0 || int64(size) > int64(len(rest)) {
			return nil, fmt.Errorf("%w: message %d of %d: payload of %d bytes, %d left", ErrBadBatch, i, n, size, len(rest))
		}
		msgs = append(msgs, BatchMessage{Meta: meta, Payload: rest[:size:size]})
		rest = rest[size:]
	}
	return msgs, nil
}

// AppendBatchMessage appends one message of a batch body to dst. It sets meta.PayloadSize to
// len(payload) before encoding meta.
func AppendBatchMessage(dst []byte, meta *pb.SingleMessageMetadata, payload []byte) ([]byte, error) {
	if len(payload) > math.MaxInt32 {
		return dst, fmt.Errorf("wire: batch message payload of %d bytes", len(payload))
	}
	meta.PayloadSize = proto.Int32(int32(len(payload)))
	opts := proto.MarshalOptions{}
	start := len(dst)
	dst = binary.BigEndian.AppendUint32(dst, uint32(opts.Size(meta)))
	dst, err := opts.MarshalAppend(dst, meta)
	if err != nil {
		return dst[:start], fmt.Errorf("wire: encode single message metadata: %w", err)
	}
	return append(dst, payload...), nil
}

// BatchFields are the SingleMessageMetadata fields a producer gives one message of a batch;
// an empty PartitionKey or OrderingKey and a zero EventTime are left out.
type BatchFields struct {
	Properties   map[string]string
	PartitionKey string
	OrderingKey  string
	EventTime    uint64
	SequenceID   uint64
}

// AppendBatchFields appends one message of a batch body to dst, as AppendBatchMessage does
// for a SingleMessageMetadata of those fields, but without building one: a producer batching
// small messages spent a sixth of its CPU turning each message's properties into KeyValues
// and encoding them by reflection. The properties go in the map's order, as
// AppendBatchMessage gives them from a slice built from the map.
func AppendBatchFields(dst []byte, f BatchFields, payload []byte) ([]byte, error) {
	if len(payload) > math.MaxInt32 {
		return dst, fmt.Errorf("wire: batch message payload of %d bytes", len(payload))
	}
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0) // the metadata's size, once known
	for k, v := range f.Properties {
		dst = protowire.AppendTag(dst, 1, protowire.BytesType)
		kv := protowire.SizeTag(1) + protowire.SizeBytes(len(k)) + protowire.SizeTag(2) + protowire.SizeBytes(len(v))
		dst = protowire.AppendVarint(dst, uint64(kv))
		dst = protowire.AppendString(protowire.AppendTag(dst, 1, protowire.BytesType), k)
		dst = protowire.AppendString(protowire.AppendTag(dst, 2, protowire.BytesType), v)
	}
	if f.PartitionKey != "" {
		dst = protowire.AppendString(protowire.AppendTag(dst, 2, protowire.BytesType), f.PartitionKey)
	}
	dst = protowire.AppendVarint(protowire.AppendTag(dst, 3, protowire.VarintType), uint64(len(payload)))
	if f.EventTime != 0 {
		dst = protowire.AppendVarint(protowire.AppendTag(dst, 5, protowire.VarintType), f.EventTime)
	}
	if f.OrderingKey != "" {
		dst = protowire.AppendString(protowire.AppendTag(dst, 7, protowire.BytesType), f.OrderingKey)
	}
	dst = protowire.AppendVarint(protowire.AppendTag(dst, 8, protowire.VarintType), f.SequenceID)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return append(dst, payload...), nil
}

// MinBatchMessageSize is the smallest a message of a batch body can be: its 4-byte metadata
// size and a metadata holding only the required payload_size (tag and a one-byte varint), with
// an empty payload.
const MinBatchMessageSize = 6

// CountBatch counts the messages an uncompressed batch body holds, walking their sizes once
// without decoding or copying anything: a broker can check a SEND's num_messages_in_batch
// against it. Every message must be whole, with a well-formed metadata holding payload_size,
// and the body must end exactly after the last one; otherwise the error wraps ErrBadBatch.
func CountBatch(body []byte) (int, error) {
	n := 0
	for rest := body; len(rest) > 0; n++ {
		if len(rest) < 4 {
			return n, fmt.Errorf("%w: message %d: %d bytes left, no room for its size", ErrBadBatch, n, len(rest))
		}
		metaSize := binary.BigEndian.Uint32(rest)
		rest = rest[4:]
		if uint64(metaSize) > uint64(len(rest)) {
			return n, fmt.Errorf("%w: message %d: metadata of %d bytes, %d left", ErrBadBatch, n, metaSize, len(rest))
		}
		size, err := payloadSize(rest[:metaSize])
		if err != nil {
			return n, fmt.Errorf("%w: message %d: %w", ErrBadBatch, n, err)
		}
		rest = rest[metaSize:]
		if size > int64(len(rest)) {
			return n, fmt.Errorf("%w: message %d: payload of %d bytes, %d left", ErrBadBatch, n, size, len(rest))
		}
		rest = rest[size:]
	}
	return n, nil
}

// payloadSize finds SingleMessageMetadata.payload_size (field 3) in an encoded metadata,
// checking that every field is well formed.
func payloadSize(meta []byte) (int64, error) {
	size, found := int64(0), false
	for len(meta) > 0 {
		num, typ, n := protowire.ConsumeTag(meta)
		if n < 0 {
			return 0, protowire.ParseError(n)
		}
		meta = meta[n:]
		if num == 3 && typ == protowire.VarintType {
			v, m := protowire.ConsumeVarint(meta)
			if m < 0 {
				return 0, protowire.ParseError(m)
			}
			if int32(v) < 0 {
				return 0, fmt.Errorf("negative payload size %d", int32(v))
			}
			size, found = int64(int32(v)), true
			meta = meta[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, meta)
		if m < 0 {
			return 0, protowire.ParseError(m)
		}
		meta = meta[m:]
	}
	if !found {
		return 0, errors.New("metadata without payload_size")
	}
	return size, nil
}
