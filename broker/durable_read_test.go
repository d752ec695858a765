package broker_test

// Reading a backlog back from disk: the dispatcher reads what the consumers can take, not a
// fixed hundred entries of which it then drops all but a few.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker/storage"
)

func TestDurableBacklogReadsWhatConsumersTake(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		batch    int // messages per entry; 1: unbatched
		receiver int // the consumer's receiver queue, so its permits
	}{
		{"one message per entry", 1, 10},
		{"batches of 20", 20, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := &storage.FaultFS{}
			// No tail cache: every entry the consumer gets is read from its segment file.
			b := startStore(t, t.TempDir(), storage.FileStoreOptions{FS: fs, TailCache: -1})
			c := newClient(t, b)
			topic := topicName(t)
			cons := subscribe(t, c, pulsar.ConsumerOptions{
				Topic: topic, SubscriptionName: "s", ReceiverQueueSize: tc.receiver,
				SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest,
			})
			const n = 2000
			opts := pulsar.ProducerOptions{Topic: topic, DisableBatching: tc.batch == 1}
			if tc.batch > 1 {
				opts.BatchingMaxMessages = uint(tc.batch)
				opts.BatchingMaxPublishDelay = time.Hour // batches are full, or flushed at the end
			}
			p := createProducer(t, c, opts)
			msgs := make([]*pulsar.ProducerMessage, n)
			for i := range msgs {
				msgs[i] = &pulsar.ProducerMessage{Payload: fmt.Appendf(make([]byte, 0, 1024), "%-1024d", i)}
			}
			sendAll(t, p, msgs, 20*time.Second)

			before := fs.ReadBytes()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for i := range n {
				m, err := cons.Receive(ctx)
				if err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
				if want := fmt.Sprintf("%-1024d", i); string(m.Payload()) != want {
					t.Fatalf("message %d is %.20q…", i, m.Payload())
				}
				cons.Ack(m)
			}
			// The messages are 2000 KiB; entry headers and metadata add a little. Reading a
			// hundred entries for every few delivered made this dozens of times more.
			read := fs.ReadBytes() - before
			t.Logf("read %d KiB from segment files for %d KiB of messages", read>>10, n)
			if read > 2*n<<10 {
				t.Fatalf("read %d KiB from segment files to deliver %d KiB of messages", read>>10, n)
			}
		})
	}
}
