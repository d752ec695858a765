package broker

import (
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
)

// frameBlocks lends the in-memory store the broker's frame buffers as the slabs it copies small
// entries into (storage.Blocks): one pool serves both, so that what a freed ledger gives back
// holds the next entries, however they arrived, instead of fresh pages from the runtime.
type frameBlocks struct{ pool *wire.BufferPool }

func (f frameBlocks) Block(n int) ([]byte, storage.Holder) {
	b := f.pool.Get(n)
	return b.B[:0], b
}
