package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

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
func ParseBatch(payload []byte, n int) ([]BatchMessage, error) {
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
		if err := proto.Unmarshal(rest[:metaSize], meta); err != nil {
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
