package broker

import (
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/compress"
)

// keyedMessage is one message of an entry as compaction sees it: its key (the partition key,
// as upstream compacts by), its batch index (−1 for an entry that is not a batch) and whether
// it removes the key (an empty payload).
type keyedMessage struct {
	key       string
	index     int32
	tombstone bool
}

// entryKeys lists the keyed messages of e, as upstream's compactor extracts them: messages
// without a key are left out, and so are the messages of an entry it cannot read (a malformed
// or compressed-and-corrupt batch). An encrypted batch cannot be opened: it counts as one
// message under the entry's own key, as upstream's compactor treats what it cannot split.
func entryKeys(e storage.Entry) []keyedMessage {
	md, payload, err := wire.ParsePayload(e.Data)
	if err != nil {
		return nil
	}
	if !e.Meta.Batched || len(md.GetEncryptionKeys()) > 0 {
		if md.PartitionKey == nil {
			return nil
		}
		empty := len(payload) == 0 || md.GetNullValue()
		return []keyedMessage{{key: md.GetPartitionKey(), index: -1, tombstone: empty}}
	}
	body, err := compress.Decompress(md.GetCompression(), payload, int(md.GetUncompressedSize()))
	if err != nil {
		return nil
	}
	msgs, err := wire.ParseBatch(body, int(md.GetNumMessagesInBatch()))
	if err != nil {
		return nil
	}
	out := make([]keyedMessage, 0, len(msgs))
	for i, m := range msgs {
		if m.Meta.PartitionKey == nil || m.Meta.GetCompactedOut() {
			continue
		}
		empty := len(m.Payload) == 0 || m.Meta.GetNullValue()
		out = append(out, keyedMessage{key: m.Meta.GetPartitionKey(), index: int32(i), tombstone: empty})
	}
	return out
}
