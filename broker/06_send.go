package broker

import (
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// SEND → SEND_RECEIPT (after the entry is stored) or SEND_ERROR. One receipt per SEND, in SEND
// order, echoing the sequence id; a batch is one entry. Chunks are entries of their own. The
// payload is stored exactly as received so MESSAGE can replay it with its checksum intact.
// Not implemented: deduplication (off by default upstream too), transactions.

func (c *conn) handleSend(cmd *pb.CommandSend, payload []byte) error {
	c.mu.Lock()
	p := c.producers[cmd.GetProducerId()]
	c.mu.Unlock()
	if p == nil {
		return errProtocol("SEND for unknown producer")
	}
	if !p.ready {
		p.fail(cmd, pb.ServerError_NotAllowedError, "producer is waiting for exclusive access")
		return nil
	}
	if payload == nil {
		return errProtocol("SEND without a payload")
	}
	if len(payload)-10 > c.b.cfg.MaxMessageSize { // metadata + payload, as clients count it
		p.fail(cmd, pb.ServerError_NotAllowedError, "message exceeds the maximum message size")
		return nil
	}
	md, err := wire.DecodeMetadata(payload) // the reader verified the checksum
	if err != nil {
		c.sendChecksumError(cmd, err)
		return nil
	}
	meta := storage.Meta{
		PublishTime:  int64(md.GetPublishTime()),
		NumMessages:  max(cmd.GetNumMessages(), 1),
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
		meta.NumMessages = max(md.GetNumMessagesInBatch(), 1)
	}
	if k := md.GetOrderingKey(); len(k) > 0 {
		meta.Key = string(k)
	} else {
		meta.Key = md.GetPartitionKey()
	}
	// The reader detached this frame's buffer (conn.readLoop): the log keeps it as it is, and
	// holds it if it is a pooled one.
	hold := c.sendHold
	c.sendHold = nil
	p.topic.publish(p, cmd, meta, payload, hold)
	return nil
}
