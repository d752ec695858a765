package main

// The files part: open descriptors of a durable broker that keeps many sealed segments. 20,000
// sealed segments in 1,000 topics (one entry each, written with the broker's storage package),
// then `letterbox broker --data DIR` at its default bound of open segment files, and a new
// subscription on every topic reads it once through our client (one connection): the broker's
// descriptors, sampled all along, against what it had at ready plus the bound and the
// connection.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Targets from issue 36.
const (
	filesTopics   = 1000
	filesSegments = 20 // sealed, per topic
)

// filesReport is what the files part measured (zero values: not measured).
type filesReport struct {
	written     time.Duration
	atReady     int // the broker's descriptors after its ready line
	peak        int // the most sampled while the topics were read
	connections int
	read        int64 // messages the subscriptions received
	took        time.Duration
}

// measureFiles runs the files part with bin.
func measureFiles(ctx context.Context, r *filesReport, bin string, progress func(string, ...any), failed func(string, error)) {
	dir, err := os.MkdirTemp("", "letterbox-bench-files-")
	if err != nil {
		failed("files: data directory", err)
		return
	}
	defer os.RemoveAll(dir)
	progress("files: writing %d sealed segments in %d topics", filesTopics*filesSegments, filesTopics)
	began := time.Now()
	if err := writeSealed(ctx, dir); err != nil {
		failed("files: writing the segments", err)
		return
	}
	r.written = time.Since(began)
	b, err := startBroker(ctx, bin, "--data", dir)
	if err != nil {
		failed("files: starting the broker", err)
		return
	}
	defer b.stop()
	if r.atReady, err = descriptors(b.pid()); err != nil {
		failed("files: the broker's descriptors", err)
		return
	}
	cl, err := client.New(client.Options{ServiceURL: b.serviceURL, OperationTimeout: 30 * time.Second, Logger: ourLogger})
	if err != nil {
		failed("files: client", err)
		return
	}
	defer cl.Close()
	r.connections = 1
	progress("files: a new subscription reads each topic once (%d descriptors at ready)", r.atReady)
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if n, err := descriptors(b.pid()); err == nil && int64(n) > peak.Load() {
				peak.Store(int64(n))
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	began = time.Now()
	var read atomic.Int64
	err = readEachOnce(ctx, cl, &read)
	r.took, r.read = time.Since(began), read.Load()
	close(stop)
	<-sampled
	r.peak = int(peak.Load())
	if err != nil {
		failed("files: reading the topics", err)
		r.peak = 0
	}
}

// writeSealed writes filesSegments messages to each of filesTopics topics in the data
// directory dir, a ledger each: the broker's next open seals them all.
func writeSealed(ctx context.Context, dir string) error {
	st, err := storage.OpenFileStore(dir, storage.FileStoreOptions{NoSync: true, Rollover: storage.Rollover{MaxEntries: 1, MinAge: -1}})
	if err != nil {
		return err
	}
	defer st.Close()
	payload := make([]byte, payloadSize)
	for t := range filesTopics {
		if err := ctx.Err(); err != nil {
			return err
		}
		l, err := st.OpenLog(filesTopic(t))
		if err != nil {
			return err
		}
		for i := range filesSegments {
			now, seq, producer := time.Now().UnixMilli(), uint64(i), "bench-files"
			data, err := wire.AppendPayload(nil, &pb.MessageMetadata{ProducerName: &producer, SequenceId: &seq, PublishTime: ptrU64(uint64(now))}, payload)
			if err != nil {
				return err
			}
			done := make(chan error, 1)
			l.Append(storage.Meta{PublishTime: now, NumMessages: 1, ProducerName: producer, SequenceID: seq}, data, nil,
				func(_ storage.Position, err error) { done <- err })
			if err := <-done; err != nil {
				return err
			}
		}
	}
	return nil
}

func filesTopic(t int) string { return fmt.Sprintf("persistent://public/default/files-%04d", t) }

// readEachOnce subscribes to every topic from its earliest message, eight at a time over the
// client's one connection, and receives and acknowledges all of it.
func readEachOnce(ctx context.Context, cl *client.Client, read *atomic.Int64) error {
	topics := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 8 {
		wg.Go(func() {
			for t := range topics {
				if err := readTopic(ctx, cl, filesTopic(t), read); err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, err)
					mu.Unlock()
				}
			}
		})
	}
	for t := 0; t < filesTopics && ctx.Err() == nil; t++ {
		topics <- t
	}
	close(topics)
	wg.Wait()
	return cmpErr(firstErr, ctx.Err())
}

func readTopic(ctx context.Context, cl *client.Client, topic string, read *atomic.Int64) error {
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cons, err := cl.Subscribe(rctx, client.ConsumerOptions{Topic: topic, SubscriptionName: "new", InitialPosition: client.Earliest})
	if err != nil {
		return fmt.Errorf("%s: %w", topic, err)
	}
	defer cons.Close()
	for i := range filesSegments {
		m, err := cons.Receive(rctx)
		if err != nil {
			return fmt.Errorf("%s: received %d of %d: %w", topic, i, filesSegments, err)
		}
		_ = cons.Ack(m)
		read.Add(1)
	}
	return nil
}

// descriptors counts the open file descriptors of process pid.
func descriptors(pid int) (int, error) {
	des, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(des), err
}

// markdown renders the files section.
func (r *filesReport) markdown(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## Open files\n\n")
	if r.peak == 0 {
		p("Not measured (see Failures).\n")
		return
	}
	limit := r.atReady + storage.DefaultOpenFiles + r.connections
	p("`letterbox broker --data DIR` on a data directory of %s sealed segments in %s topics (%d each, one 1 KiB message per segment, written in %.1f s with the "+
		"broker's storage package), at its default bound of open segment and index files, `openFileLimit` %d. After its ready line a new subscription on "+
		"every topic, from the earliest message, reads it once through our client, eight topics at a time over its one connection (%s messages in %.1f s). "+
		"The broker's descriptors (`/proc/<pid>/fd`) are counted at ready (its listeners, metadata store, lock, logs and standard streams) and every 10 ms "+
		"while the topics are read.\n\n",
		thousands(filesTopics*filesSegments), thousands(filesTopics), filesSegments, r.written.Seconds(), storage.DefaultOpenFiles,
		thousands(int(r.read)), r.took.Seconds())
	p("| metric | measured | target | |\n|---|---|---|---|\n")
	p("| open descriptors while %s sealed segments are read once, default bound | %d at most (%d at ready) | ≤ %d: at ready + %d + %d connection | %s |\n",
		thousands(filesTopics*filesSegments), r.peak, r.atReady, limit, storage.DefaultOpenFiles, r.connections, metText(r.peak <= limit))
}
