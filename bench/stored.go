package main

// The stored part: how long `letterbox broker --data DIR` takes to be ready with 10 GiB stored in
// 1,000 topics, with the page cache warm and after dropping it, and how long a topic's first
// lookup takes, which opens it (topics open on first use). The data set is written once with
// the broker's storage package, then given a subscription per topic that keeps it, by the
// broker itself, which stops gracefully, as a developer's data directory is after a few days of
// use; it stays in the OS temp directory between runs only with -keep-stored.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Targets from issue 22.
const (
	storedBytes       = 10 << 30
	storedTopics      = 1000
	targetStoredWarm  = 50 * time.Millisecond
	targetStoredCold  = 200 * time.Millisecond
	targetFirstLookup = 20 * time.Millisecond
	// storedDirName is the data set's directory in the OS temp directory; its version changes
	// whenever the data set would.
	storedDirName = "letterbox-bench-stored-v1"
	storedDone    = "COMPLETE" // written last: a directory without it is written again
)

// storedReport is what the stored part measured.
type storedReport struct {
	skipped     string // why nothing was measured ("" if measured)
	coldSkipped string // why the cold starts were not measured
	stored      int64  // bytes of segment files
	topics      int
	reused      bool // the data set was left by an earlier run (-keep-stored)
	warm, cold  []time.Duration
	// warmLookup and coldLookup are first lookups (HTTP /lookup/v2) of topics no lookup had
	// opened, right after the ready line of a warm or a cold start.
	warmLookup, coldLookup []time.Duration
}

// measureStored runs the stored part with bin.
func measureStored(ctx context.Context, r *storedReport, o options, bin string, progress func(string, ...any), failed func(string, error)) {
	dir := filepath.Join(os.TempDir(), storedDirName)
	if !o.keepStored {
		defer os.RemoveAll(dir)
	}
	if _, err := os.Stat(filepath.Join(dir, storedDone)); err == nil {
		r.reused = true
		progress("stored: reusing the data set in %s", dir)
	} else {
		if why := storedSpace(dir); why != "" {
			r.skipped = why
			progress("stored: skipped: %s", why)
			return
		}
		if err := writeStored(ctx, dir, bin, progress); err != nil {
			failed("stored: writing the data set", err)
			return
		}
	}
	var err error
	if r.stored, r.topics, err = segmentBytes(filepath.Join(dir, "topics")); err != nil {
		failed("stored: measuring the data set", err)
		return
	}
	next := 0 // topics are looked up in order, each once per run
	start := func(cold bool) error {
		if cold {
			if err := dropPageCache(); err != nil {
				return err
			}
		}
		p, err := startBroker(ctx, bin, "--data", dir)
		if err != nil {
			return err
		}
		defer p.stop()
		topic := fmt.Sprintf("stored-%04d", (next*389)%storedTopics) // spread over the directory
		next++
		d, err := firstLookup(ctx, p.httpURL, topic)
		if err != nil {
			return err
		}
		if cold {
			r.cold, r.coldLookup = append(r.cold, p.startup), append(r.coldLookup, d)
		} else {
			r.warm, r.warmLookup = append(r.warm, p.startup), append(r.warmLookup, d)
		}
		return p.stop()
	}
	progress("stored: %d warm starts with %.1f GiB in %d topics", o.starts, float64(r.stored)/(1<<30), r.topics)
	start(false) // unmeasured: warms the cache after writing or after an earlier part
	r.warm, r.warmLookup = nil, nil
	for range o.starts {
		if err := start(false); err != nil {
			failed("stored: warm start", err)
			return
		}
	}
	if os.Geteuid() != 0 {
		r.coldSkipped = fmt.Sprintf("dropping the page cache needs root; the bench ran as uid %d", os.Geteuid())
		return
	}
	progress("stored: %d starts after dropping the page cache", o.starts)
	for range o.starts {
		if err := start(true); err != nil {
			failed("stored: cold start", err)
			return
		}
	}
}

// storedSpace says why the data set cannot be written in dir's file system ("" if it can).
func storedSpace(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(dir), &st); err != nil {
		return fmt.Sprintf("cannot tell the free space of %s: %v", filepath.Dir(dir), err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if old, _, err := segmentBytes(filepath.Join(dir, "topics")); err == nil {
		free += old // an unfinished data set is written again
	}
	// The data set, its indexes and a margin for the rest of the machine.
	if need := int64(storedBytes) + storedBytes/10 + 2<<30; free < need {
		return fmt.Sprintf("needs %.1f GiB free in %s, has %.1f GiB", float64(need)/(1<<30), filepath.Dir(dir), float64(free)/(1<<30))
	}
	return ""
}

// writeStored writes the data set into dir: storedTopics topics of 1 KiB messages, one per
// entry as a producer without batching stores them, storedBytes in all; then a broker on dir
// gives each a subscription at the earliest message, so that retention keeps it, and stops.
func writeStored(ctx context.Context, dir, bin string, progress func(string, ...any)) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	progress("stored: writing %.0f GiB in %d topics to %s (once; -keep-stored keeps it for the next run)", float64(storedBytes)/(1<<30), storedTopics, dir)
	began := time.Now()
	st, err := storage.OpenFileStore(dir, storage.FileStoreOptions{NoSync: true, TailCache: -1})
	if err != nil {
		return err
	}
	payload := make([]byte, payloadSize)
	for i := range payload {
		payload[i] = byte('a' + i%26)
	}
	perTopic := int64(storedBytes / storedTopics)
	for t := range storedTopics {
		if err := ctx.Err(); err != nil {
			st.Close()
			return err
		}
		name := fmt.Sprintf("persistent://public/default/stored-%04d", t)
		l, err := st.OpenLog(name)
		if err != nil {
			st.Close()
			return err
		}
		var failed error
		now := time.Now().UnixMilli()
		for seq, size := uint64(0), int64(0); size < perTopic; seq++ {
			producer := "bench-stored"
			data, err := wire.AppendPayload(nil, &pb.MessageMetadata{
				ProducerName: &producer, SequenceId: &seq, PublishTime: ptrU64(uint64(now)),
			}, payload)
			if err != nil {
				st.Close()
				return err
			}
			size += int64(len(data))
			l.Append(storage.Meta{PublishTime: now, NumMessages: 1, ProducerName: producer, SequenceID: seq}, data, nil,
				func(_ storage.Position, err error) {
					if err != nil && failed == nil {
						failed = err // on the log's writer goroutine, read after Close
					}
				})
		}
		if err := l.Close(); err != nil || failed != nil {
			st.Close()
			return fmt.Errorf("writing %s: %w", name, errors.Join(err, failed))
		}
		if t%100 == 99 {
			progress("stored: %d topics written", t+1)
		}
	}
	if err := st.Close(); err != nil {
		return err
	}
	syscall.Sync()
	progress("stored: written in %v; subscribing to every topic through the broker", time.Since(began).Round(time.Second))
	p, err := startBroker(ctx, bin, "--data", dir)
	if err != nil {
		return err
	}
	defer p.stop()
	for t := range storedTopics {
		u := fmt.Sprintf("%s/admin/v2/persistent/public/default/stored-%04d/subscription/keep", p.httpURL, t)
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, strings.NewReader(`{"ledgerId":-1,"entryId":-1,"partitionIndex":-1}`))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("creating the subscription of stored-%04d: %s: %s", t, resp.Status, body)
		}
	}
	if err := p.stop(); err != nil {
		return err
	}
	syscall.Sync()
	if err := os.WriteFile(filepath.Join(dir, storedDone), nil, 0o644); err != nil {
		return err
	}
	progress("stored: data set ready in %v", time.Since(began).Round(time.Second))
	return nil
}

func ptrU64(v uint64) *uint64 { return &v }

// firstLookup times an HTTP lookup of topic, on a new connection.
func firstLookup(ctx context.Context, httpURL, topic string) (time.Duration, error) {
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, httpURL+"/lookup/v2/topic/persistent/public/default/"+topic, nil)
	if err != nil {
		return 0, err
	}
	began := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(began)
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("lookup of %s: %s: %s", topic, resp.Status, body)
	}
	return d, nil
}

// dropPageCache writes dirty pages out and drops the clean ones (root only).
func dropPageCache() error {
	syscall.Sync()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0o200); err != nil {
		return fmt.Errorf("dropping the page cache: %w", err)
	}
	return nil
}
