package broker

import (
	"fmt"
	"testing"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
)

// Busy topics sent to at the same pace fill and free their in-memory ledgers within moments of
// each other: the broker's frame buffer pool, at its default bound, keeps what they free
// together, so that once the first ledgers are freed the next entries need almost no fresh
// memory (index pages and the like). With the old bound of 32 MiB nine tenths of every
// ledger was fresh memory, and on one CPU each garbage collection it caused was felt in every
// producer's latency.
func TestFramePoolKeepsWhatBusyTopicsFreeTogether(t *testing.T) {
	t.Parallel()
	const topics, entries = 100, 300_000 // 1 KiB each: 3 ledgers a topic
	pool := wire.NewBufferPool(DefaultConfig().FrameBufferPool, false)
	s := storage.NewMemoryStoreWith(storage.MemoryStoreOptions{Blocks: frameBlocks{pool}})
	defer s.Close()
	logs := make([]storage.Log, topics)
	last := make([]storage.Position, topics)
	for i := range logs {
		l, err := s.OpenLog(fmt.Sprintf("persistent://public/default/busy-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		logs[i] = l
	}
	data := make([]byte, 1024)
	stream := func() (fresh int64) {
		before := pool.Allocated()
		for i := range entries {
			k := i % topics
			logs[k].Append(storage.Meta{NumMessages: 1, ProducerName: "p"}, data, nil, func(p storage.Position, err error) {
				if err != nil {
					t.Error(err)
				}
				last[k] = p
			})
			if i%(10*topics) == 10*topics-1 { // every topic's subscription keeps up
				for j, l := range logs {
					l.TrimBefore(l.Next(last[j]))
				}
			}
		}
		return pool.Allocated() - before
	}
	stream() // the first ledgers are fresh memory
	appended := int64(entries * len(data))
	if fresh := stream(); fresh > appended/10 {
		t.Errorf("after the first ledgers were freed, %d MB appended took %d MB of fresh buffers: want at most a tenth", appended>>20, fresh>>20)
	}
}
