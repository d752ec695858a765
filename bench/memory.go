package main

// The memory part: what the in-memory broker's heap holds for what it keeps. A million messages
// of 1 KiB (payloadSize), one entry each, on `letterbox broker --in-memory` in its own process,
// kept by a subscription that reads nothing; then the broker's heap in use after a garbage
// collection that began once they were all in, from its /metrics, and its RSS, with the
// collector's settings it ran with. Before it, what a stream consumed as it comes leaves
// behind (memorystream.go).

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
)

// Targets from issue 22.
const (
	memoryKept     = 1_000_000
	targetKeptHeap = 1_200_000_000
)

// gcWait bounds the wait for a collection after the fill: the Go runtime forces one when none
// ran for two minutes, and an idle broker allocates too little to start one sooner.
const gcWait = 150 * time.Second

// sweepWait is how long after that collection the figures are read (waitForGC).
const sweepWait = 2 * time.Second

// memoryReport is what the memory part measured (zero values: not measured).
type memoryReport struct {
	n        int
	fill     time.Duration
	heap     int64 // heapInUse after the collection
	live     int64 // go_gc_heap_live_bytes: what that collection found live
	budget   int64 // letterbox_memory_in_use_bytes: what the store counts
	rss      int64
	gcAfter  time.Duration // from the end of the fill to the collection
	gogc     string        // go_gc_gogc_percent
	memlimit string        // go_gc_gomemlimit_bytes
	args     string
	skipped  string
	stream   streamReport
}

// memoryNeeded is what the part needs free: the payload and the broker's overhead, the bench's
// client and some room.
func memoryNeeded(n int) int64 { return int64(n)*2*payloadSize + 1<<30 }

// measureMemory fills a broker of its own and reads its heap.
func measureMemory(ctx context.Context, r *memoryReport, bin string, progress func(string, ...any), failed func(string, error)) {
	measureStream(ctx, &r.stream, bin, progress, failed)
	if ctx.Err() != nil {
		return
	}
	r.n = memoryKept
	if avail, err := memAvailable(); err != nil {
		failed("memory: free memory", err)
		return
	} else if need := memoryNeeded(r.n); avail < need {
		r.skipped = fmt.Sprintf("the broker holding %s messages of %d bytes and the bench need about %.1f GB of memory; the machine had %.1f GB available",
			thousands(r.n), payloadSize, float64(need)/1e9, float64(avail)/1e9)
		progress("memory: skipped: %s", r.skipped)
		return
	}
	b, args, err := startDLQBroker(ctx, bin)
	if err != nil {
		failed("memory: starting the broker", err)
		return
	}
	defer b.stop()
	r.args = strings.Join(args, " ")
	progress("memory: producing %s messages of %d bytes, one entry each, kept by a subscription", thousands(r.n), payloadSize)
	payload := make([]byte, payloadSize)
	f := dlqFill{topic: fmt.Sprintf("persistent://public/default/bench-kept-%d", time.Now().UnixNano()), sub: "keeps", n: r.n,
		letter: func(int) *client.Message { return &client.Message{Payload: payload} }}
	if r.fill, err = fillDLQ(ctx, b.serviceURL, f); err == nil {
		err = b.alive()
	}
	if err != nil {
		failed("memory: filling the topic", err)
		return
	}
	filled := time.Now()
	progress("memory: filled in %.1f s; waiting for the broker's next garbage collection (at most %v)", r.fill.Seconds(), gcWait)
	m, err := waitForGC(ctx, b.httpURL, filled)
	if err != nil {
		failed("memory: the broker's heap after a collection", err)
		return
	}
	r.rss, _ = processRSS(b.pid())
	r.heap, r.live, r.budget = heapInUse(m), int64(m["go_gc_heap_live_bytes"]), int64(m["letterbox_memory_in_use_bytes"])
	r.gcAfter = time.Unix(0, int64(m["go_memstats_last_gc_time_seconds"]*1e9)).Sub(filled)
	r.gogc = strconv.FormatFloat(m["go_gc_gogc_percent"], 'f', -1, 64)
	r.memlimit = "none"
	if l := m["go_gc_gomemlimit_bytes"]; l < 1<<62 {
		r.memlimit = megabytes(int64(l))
	}
	progress("memory: heap in use %s after a collection %.1f s after the fill (live %s, store %s), RSS %s",
		megabytes(r.heap), r.gcAfter.Seconds(), megabytes(r.live), megabytes(r.budget), megabytes(r.rss))
}

// waitForGC polls the broker's /metrics until a collection has ended after since, and returns
// the figures of a scrape sweepWait later: heap in use counts the spans a collection freed
// until they are swept, which the runtime does in the background after it.
func waitForGC(ctx context.Context, httpURL string, since time.Time) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, gcWait)
	defer cancel()
	for {
		m, err := scrapeMetrics(ctx, httpURL)
		if err != nil {
			return nil, err
		}
		last, ok := m["go_memstats_last_gc_time_seconds"]
		if !ok {
			return nil, fmt.Errorf("no go_memstats_last_gc_time_seconds in %s/metrics", httpURL)
		}
		if last*1e9 > float64(since.UnixNano()) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(sweepWait):
			}
			return scrapeMetrics(ctx, httpURL)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no garbage collection within %v of the fill: %w", gcWait, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// scrapeMetrics reads the unlabelled samples (and the first of each labelled family) of the
// broker's /metrics.
func scrapeMetrics(ctx context.Context, httpURL string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, httpURL+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, "{")
		if _, seen := out[name]; seen {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] = v
		}
	}
	return out, sc.Err()
}

// markdown renders the memory section.
func (r *memoryReport) markdown(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## Memory\n\n")
	p("| metric | measured | target | |\n|---|---|---|---|\n")
	r.stream.row(b)
	switch {
	case r.skipped != "":
		p("| broker heap in use after a GC, %s × %d B kept | skipped | < 1.2 GB | |\n", thousands(memoryKept), payloadSize)
	case r.heap == 0:
		p("| broker heap in use after a GC, %s × %d B kept | %s | < 1.2 GB | not measured |\n", thousands(memoryKept), payloadSize, notMeasuredText)
	default:
		p("| broker heap in use after a GC, %s × %d B kept | %s (live %s, store %s, RSS %s) | < 1.2 GB | %s |\n",
			thousands(r.n), payloadSize, megabytes(r.heap), megabytes(r.live), megabytes(r.budget), megabytes(r.rss), metText(r.heap < targetKeptHeap))
	}
	r.stream.notes(b)
	switch {
	case r.skipped != "":
		p("\nKept messages skipped: %s.\n", r.skipped)
	case r.heap != 0:
		p("\nKept messages: `letterbox broker %s` in its own process: %s messages of %d bytes produced one entry each by our client (%.1f s), kept by a "+
			"subscription that reads nothing. Heap in use is the broker's `go_memstats_heap_inuse_bytes` plus its frame buffers mapped outside Go's heap "+
			"(`letterbox_frame_buffers_off_heap_bytes`: the stored data) from its `/metrics` %v after the end of the first "+
			"garbage collection to end after the fill (%.1f s after it; not at once, since heap in use counts the spans a collection freed until the runtime has swept them); "+
			"live is what that collection marked of Go's heap (`go_gc_heap_live_bytes`), the "+
			"store's count `letterbox_memory_in_use_bytes`, RSS `VmRSS`. GC settings: GOGC %s, GOMEMLIMIT %s.\n",
			r.args, thousands(r.n), payloadSize, r.fill.Seconds(), sweepWait, r.gcAfter.Seconds(), r.gogc, r.memlimit)
	}
}
