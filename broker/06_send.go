package broker

import (
	"encoding/binary"
	"fmt"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// SEND → SEND_RECEIPT (after the entry is stored) or SEND_ERROR. One receipt per SEND, in SEND
// order, echoing the sequence id; a batch is one entry. Chunks are entries of their own. The
// payload is stored exactly as received so MESSAGE can replay it with its checksum intact.
// Not implemented: transactions.
//
// The size of a SEND is bounded only by the frame reader: maxMessageSize plus upstream's 10 KiB
// of frame padding for the command and metadata (wire.MaxFrameSize), as upstream's frame
// decoder; a larger frame closes the connection. The official Go client sizes each chunk of a
// chunked message to maxMessageSize less its metadata without the chunk fields, so every chunk
// is a few dozen bytes over maxMessageSize and must pass.
//
// A batch's num_messages_in_batch is what stats count and what a consumer's permits pay, so a
// count that cannot be true is refused with SEND_ERROR NotAllowedError (the connection stays):
// an uncompressed, unencrypted batch must hold exactly that many messages (their sizes walked
// once, nothing copied); a compressed one cannot hold more than uncompressed_size allows at the
// smallest message a batch can hold; an encrypted one is taken at its word, as its body is not
// ours to read. Upstream does not check (docs/protocol.md). A message that is not a batch
// counts one, whatever the SEND's num_messages says.

// cmd is the reader's until its next frame (wire.Reader.ReuseSendCommands): nothing here, nor
// in what it calls, keeps it or a pointer into it.
func (c *conn) handleSend(cmd *pb.CommandSend, payload []byte) error {
	c.mu.Lock()
	p := c.producers[cmd.GetProducerId()]
	c.mu.Unlock()
	if p == nil {
		if c.closedByBroker(cmd.GetProducerId()) {
			// Sent before the client read our CLOSE_PRODUCER: expected, as upstream ignores it.
			c.log.Debug("SEND for a producer the broker closed; ignored", "producer_id", cmd.GetProducerId())
			return nil
		}
		return errProtocol("SEND for unknown producer")
	}
	if !p.ready.Load() {
		p.fail(cmd, pb.ServerError_NotAllowedError, "producer is waiting for exclusive access")
		return nil
	}
	if payload == nil {
		return errProtocol("SEND without a payload")
	}
	// The reader verified the checksum. md is the connection's until the next SEND: nothing
	// below keeps it, only values copied out of it.
	md, err := c.sendMeta.DecodeWithoutProperties(payload)
	if err != nil {
		c.sendChecksumError(cmd, err)
		return nil
	}
	meta := storage.Meta{
		PublishTime:  int64(md.GetPublishTime()),
		NumMessages:  1,
		Batched:      md.NumMessagesInBatch != nil,
		DeliverAt:    md.GetDeliverAtTime(),
		ProducerName: md.GetProducerName(),
		// What deduplication tracks: the highest sequence id the SEND covers.
		SequenceID: max(cmd.GetSequenceId(), cmd.GetHighestSequenceId()),
	}
	if md.NumChunksFromMsg != nil && md.GetChunkId() != md.GetNumChunksFromMsg()-1 {
		meta.ProducerName = "" // only a chunked message's last chunk advances deduplication
	}
	if md.NumMessagesInBatch != nil {
		if msg := implausibleBatch(md, payload); msg != "" {
			c.log.Debug("SEND with an impossible batch count refused", "producer_id", cmd.GetProducerId(), "why", msg)
			p.fail(cmd, pb.ServerError_NotAllowedError, msg)
			return nil
		}
		meta.NumMessages = max(md.GetNumMessagesInBatch(), 1)
	}
	if k := md.GetOrderingKey(); len(k) > 0 {
		meta.Key = string(k)
	} else {
		meta.Key = md.GetPartitionKey()
	}
	// A pooled buffer the reader detached (conn.readLoop): the log keeps it as it is, and holds
	// it. Any other buffer is the reader's, reused for the next frame: detached for a log that
	// keeps it, not for one that copies it before Append returns (small entries in memory).
	hold := c.sendHold
	c.sendHold = nil
	if hold == nil {
		if cp, ok := p.topic.log.(storage.Copier); !ok || !cp.Copies(len(payload), len(meta.Key)) {
			c.sendReader.Detach()
		}
	}
	p.topic.publish(p, cmd, meta, payload, hold, newSendCheck(md, payload))
	return nil
}

// implausibleBatch says why a batch's num_messages_in_batch cannot be true, or "" if it can.
// payload is the SEND's headers and payload, its metadata already decoded into md.
func implausibleBatch(md *pb.MessageMetadata, payload []byte) string {
	claimed := int64(md.GetNumMessagesInBatch())
	switch {
	case len(md.GetEncryptionKeys()) > 0:
		return ""
	case md.GetCompression() != pb.CompressionType_NONE:
		if limit := int64(md.GetUncompressedSize()) / wire.MinBatchMessageSize; claimed > limit {
			return fmt.Sprintf("batch of %d messages in %d uncompressed bytes: at most %d fit", claimed, md.GetUncompressedSize(), limit)
		}
		return ""
	}
	// The reader checked the sizes; the body follows the metadata.
	body := payload[10+binary.BigEndian.Uint32(payload[6:]):]
	n, err := wire.CountBatch(body)
	switch {
	case err != nil:
		return err.Error()
	case int64(n) != claimed:
		return fmt.Sprintf("batch says %d messages and holds %d", claimed, n)
	}
	return ""
}
