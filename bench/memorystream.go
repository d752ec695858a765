package main

// The memory part's stream: what acknowledged data leaves behind. 30 s of 50 MB/s of 1 KiB
// messages (our client's producer, default batching) through one topic of `letterbox broker
// --in-memory` in its own process, a consumer receiving and acknowledging as they come; then
// the broker's heap in use after a garbage collection that began once the stream ended.
// Acknowledged data is freed a ledger at a time, so what stays is about one ledger, whatever
// went through.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/letterbox-dev/letterbox/client"
)

// Targets from issue 36.
const (
	streamBytesPerSec  = 50 << 20
	streamSpan         = 30 * time.Second
	targetStreamedHeap = 300_000_000
)

// streamReport is what the stream measured (zero values: not measured).
type streamReport struct {
	sent, received int64
	span           time.Duration
	heap, live     int64 // after the collection
	store, acked   int64 // letterbox_memory_in_use_bytes, letterbox_stored_acknowledged_bytes
	rss, peakRSS   int64 // after the collection; the largest sampled during the stream
	gcAfter        time.Duration
}

// measureStream runs the stream on a broker of bin of its own.
func measureStream(ctx context.Context, r *streamReport, bin string, progress func(string, ...any), failed func(string, error)) {
	b, err := startBroker(ctx, bin)
	if err != nil {
		failed("memory: starting the broker for the stream", err)
		return
	}
	defer b.stop()
	cl, err := client.New(client.Options{ServiceURL: b.serviceURL, OperationTimeout: 10 * time.Second, Logger: ourLogger})
	if err != nil {
		failed("memory: stream client", err)
		return
	}
	defer cl.Close()
	topic := fmt.Sprintf("persistent://public/default/bench-stream-%d", time.Now().UnixNano())
	sctx, cancel := context.WithTimeout(ctx, setupTimeout)
	cons, err := cl.Subscribe(sctx, client.ConsumerOptions{Topic: topic, SubscriptionName: "keeps-up"})
	var prod *client.Producer
	if err == nil {
		prod, err = cl.CreateProducer(sctx, client.ProducerOptions{Topic: topic})
	}
	cancel()
	if err != nil {
		failed("memory: stream producer and consumer", err)
		return
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var received atomic.Int64
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	wg.Go(func() {
		for {
			m, err := cons.Receive(rctx)
			if err != nil {
				return
			}
			_ = cons.Ack(m)
			received.Add(1)
		}
	})
	futures := make(chan *client.SendFuture, 8192)
	var failedSends atomic.Int64
	wg.Go(func() {
		for f := range futures {
			if _, err := f.Result(); err != nil {
				failedSends.Add(1)
			}
		}
	})
	rate := streamBytesPerSec / payloadSize
	n := int(float64(rate) * streamSpan.Seconds())
	progress("memory: streaming %d MB/s of %d-byte messages through one topic for %v, consumed as they come", streamBytesPerSec>>20, payloadSize, streamSpan)
	rss := sampleRSS(b.pid())
	payload := make([]byte, payloadSize)
	var stopping atomic.Bool
	began := time.Now()
	pace(rctx, &stopping, rate, n, func(int) { futures <- prod.SendAsync(rctx, &client.Message{Payload: payload}) })
	close(futures)
	if err := prod.Flush(ctx); err != nil {
		failed("memory: stream flush", err)
		rss.stop()
		return
	}
	r.span = time.Since(began)
	r.sent = int64(n) - failedSends.Load()
	// The consumer catches up with what was sent.
	deadline := time.Now().Add(30 * time.Second)
	for received.Load() < r.sent && time.Now().Before(deadline) && sleepCtx(ctx, 50*time.Millisecond) {
	}
	r.received = received.Load()
	r.peakRSS = rss.stop()
	ended := time.Now()
	progress("memory: streamed %s messages in %.1f s (%s received); waiting for the broker's next garbage collection", thousands(int(r.sent)), r.span.Seconds(), thousands(int(r.received)))
	m, err := waitForGC(ctx, b.httpURL, ended)
	if err != nil {
		failed("memory: the broker's heap after the stream", err)
		return
	}
	r.rss, _ = processRSS(b.pid())
	r.heap, r.live = heapInUse(m), int64(m["go_gc_heap_live_bytes"])
	r.store, r.acked = int64(m["letterbox_memory_in_use_bytes"]), int64(m["letterbox_stored_acknowledged_bytes"])
	r.gcAfter = time.Unix(0, int64(m["go_memstats_last_gc_time_seconds"]*1e9)).Sub(ended)
}

// heapInUse is the broker's heap in use from its metrics m: Go's, plus the frame buffers it maps
// outside Go's heap (which hold its in-memory data).
func heapInUse(m map[string]float64) int64 {
	return int64(m["go_memstats_heap_inuse_bytes"] + m["letterbox_frame_buffers_off_heap_bytes"])
}

// row renders the stream's row of the memory table.
func (r *streamReport) row(b *strings.Builder) {
	what := fmt.Sprintf("broker heap in use after a GC, after %v of %d MB/s consumed as it came", streamSpan, streamBytesPerSec>>20)
	if r.heap == 0 {
		fmt.Fprintf(b, "| %s | %s | < %.0f MB | not measured |\n", what, notMeasuredText, float64(targetStreamedHeap)/1e6)
		return
	}
	fmt.Fprintf(b, "| %s | %s (live %s; store %s, of which acknowledged data %s; RSS %s, at most %s during the stream) | < %.0f MB | %s |\n",
		what, megabytes(r.heap), megabytes(r.live), megabytes(r.store), megabytes(r.acked), megabytes(r.rss), megabytes(r.peakRSS),
		float64(targetStreamedHeap)/1e6, metText(r.heap < targetStreamedHeap))
}

// notes says how the stream ran.
func (r *streamReport) notes(b *strings.Builder) {
	if r.heap == 0 {
		return
	}
	fmt.Fprintf(b, "\nThe stream: `letterbox broker --in-memory` in its own process, defaults; our client's producer with default batching and a consumer "+
		"acknowledging as our client groups by default, on one topic; %s messages of %d bytes sent in %.1f s (%.0f MB/s), %s received; "+
		"the heap (Go's heap in use plus the frame buffers mapped outside it) read %v after the end of the first collection to end after the stream (%.1f s after it).\n",
		thousands(int(r.sent)), payloadSize, r.span.Seconds(), float64(r.sent*payloadSize)/r.span.Seconds()/(1<<20), thousands(int(r.received)),
		sweepWait, r.gcAfter.Seconds())
}
