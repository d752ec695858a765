package broker

import (
	"testing"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
)

// BenchmarkMemorySteadyStream appends 1 KiB entries to an in-memory log whose subscriptions keep
// up (everything before the last entry is trimmed every 1,024 entries), with the slabs from the
// garbage collector and from the broker's frame buffer pool: B/op is the fresh memory a steady
// stream asks for.
func BenchmarkMemorySteadyStream(b *testing.B) {
	for _, tc := range []struct {
		name   string
		blocks storage.Blocks
	}{{"gc", nil}, {"pooled", frameBlocks{wire.NewBufferPool(32<<20, false)}}} {
		b.Run(tc.name, func(b *testing.B) {
			s := storage.NewMemoryStoreWith(storage.MemoryStoreOptions{Blocks: tc.blocks})
			defer s.Close()
			l, err := s.OpenLog("persistent://public/default/steady")
			if err != nil {
				b.Fatal(err)
			}
			data := make([]byte, 1024)
			var last storage.Position
			done := func(p storage.Position, err error) { last = p }
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for i := range b.N {
				l.Append(storage.Meta{NumMessages: 1, ProducerName: "p"}, data, nil, done)
				if i%1024 == 1023 {
					l.TrimBefore(l.Next(last))
				}
			}
		})
	}
}
