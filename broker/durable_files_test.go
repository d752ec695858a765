package broker_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// writeSealedSegments writes n messages "<k>-<i>" to each topic name(k), k < topics, straight
// into the data directory's store, one segment each: with a rollover after every entry, the
// next open seals them all.
func writeSealedSegments(t *testing.T, dir string, topics, n int, name func(int) string) {
	t.Helper()
	store, err := storage.OpenFileStore(dir, storage.FileStoreOptions{NoSync: true, Rollover: storage.Rollover{MaxEntries: 1, MinAge: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	work := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				l, err := store.OpenLog(name(k))
				if err != nil {
					t.Error(err)
					return
				}
				for i := range n {
					now := time.Now().UnixMilli()
					data, err := wire.AppendPayload(nil, &pb.MessageMetadata{ProducerName: proto.String("writer"),
						SequenceId: proto.Uint64(uint64(i)), PublishTime: proto.Uint64(uint64(now))}, fmt.Appendf(nil, "%d-%d", k, i))
					if err != nil {
						t.Error(err)
						return
					}
					done := make(chan error, 1)
					l.Append(storage.Meta{PublishTime: now, NumMessages: 1, ProducerName: "writer", SequenceID: uint64(i)}, data, nil,
						func(_ storage.Position, err error) { done <- err })
					if err := <-done; err != nil {
						t.Errorf("append to %s: %v", name(k), err)
						return
					}
				}
			}
		}()
	}
	for k := range topics {
		work <- k
	}
	close(work)
	wg.Wait()
}

// openDescriptors counts the process's open file descriptors.
func openDescriptors(t *testing.T) int {
	t.Helper()
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("count descriptors: %v", err)
	}
	return len(des)
}

// A durable broker keeping 20,000 sealed segments across 1,000 topics, all read once by a new
// subscription, never has more descriptors open than its bound of open segment files plus its
// listeners and connections: the segment files are opened on demand through a bounded cache.
// The store's own count of what it opened is checked exactly; the process's descriptors are
// sampled while the topics are read. Not parallel: other tests' descriptors would count.
func TestDurableOpenFilesBounded(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc/self/fd")
	}
	const (
		topics   = 1000
		segments = 20 // per topic: one entry each
		bound    = 16
	)
	dir := t.TempDir()
	name := func(k int) string { return fmt.Sprintf("persistent://public/default/files-%d", k) }
	keep := func(c *broker.Config) {
		c.DefaultRetentionMinutes, c.DefaultRetentionSizeMB = -1, -1 // acknowledged or not, kept
	}

	writeSealedSegments(t, dir, topics, segments, name)

	store, err := storage.OpenFileStore(dir, storage.FileStoreOptions{NoSync: true, OpenFiles: bound})
	if err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, keep, func(c *broker.Config) { c.Store = store })
	baseline := openDescriptors(t) // the listeners, the metadata store, the test binary's own
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if n := int64(openDescriptors(t)); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	c := newClient(t, b)
	var wg sync.WaitGroup
	const connections = 1 // the client's one connection: its socket, and the broker's
	read := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range read {
				cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: name(k), SubscriptionName: "new",
					SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
				if err != nil {
					t.Errorf("subscribe to %s: %v", name(k), err)
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				for i := range segments {
					m, err := cons.Receive(ctx)
					if err != nil {
						t.Errorf("%s: received %d of %d: %v", name(k), i, segments, err)
						break
					}
					if want := fmt.Sprintf("%d-%d", k, i); string(m.Payload()) != want {
						t.Errorf("%s: message %d is %q, want %q", name(k), i, m.Payload(), want)
					}
					cons.Ack(m)
				}
				cancel()
				cons.Close()
			}
		}()
	}
	for k := range topics {
		read <- k
	}
	close(read)
	wg.Wait()
	close(stop)
	<-sampled

	if now, most := store.OpenFiles(); most > bound {
		t.Errorf("the store had %d files open at once (now %d), bound %d", most, now, bound)
	}
	if limit := baseline + bound + 2*connections; int(peak.Load()) > limit {
		t.Errorf("%d descriptors open at most while reading, over %d: %d before the client connected, the bound %d, %d connection(s) at both ends",
			peak.Load(), limit, baseline, bound, connections)
	}
	t.Logf("descriptors: %d before reading, %d at most while reading %d sealed segments of %d topics (bound %d)",
		baseline, peak.Load(), topics*segments, topics, bound)
}
