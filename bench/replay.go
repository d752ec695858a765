package main

// The replay rate: dead letters of 1 KiB, each its own entry as our client's DLQ producer
// writes them (REAL_TOPIC and the other properties of a dead letter), kept by the DLQ's
// subscription, then moved back to their origin by client/replay without a rate limit. The
// same DLQ at a rate limit is replayrate.go's.

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/replay"
)

const targetReplayRate = 50_000

// replayReport is what the replay run measured; zero values were not measured.
type replayReport struct {
	n        int           // dead letters in the DLQ
	fill     time.Duration // producing them
	elapsed  time.Duration // replay.Run, start to return
	sum      replay.Summary
	cpu      time.Duration // broker CPU during the replay
	others   float64
	measured bool
	rounds   []float64 // msg/s of every round; the report is the best one's
	// limited is the run at a rate limit (replayrate.go).
	limited replayLimitReport
}

func (r replayReport) rate() float64 { return float64(r.sum.Moved) / r.elapsed.Seconds() }

// replayDLQ is a DLQ filled for a replay: its topic and the subscription that keeps the letters.
type replayDLQ struct{ topic, sub string }

// fillReplayDLQ fills a fresh DLQ on the broker b with n dead letters of one fresh origin, and
// returns it with the time producing them took.
func fillReplayDLQ(ctx context.Context, b *brokerProc, n int) (replayDLQ, time.Duration, error) {
	origin := fmt.Sprintf("persistent://public/default/bench-replay-%d", time.Now().UnixNano())
	d := replayDLQ{topic: origin + "-app-DLQ", sub: "app-DLQ-sub"}
	payload := make([]byte, payloadSize)
	took, err := fillDLQ(ctx, b.serviceURL, dlqFill{topic: d.topic, sub: d.sub, n: n, letter: func(i int) *client.Message {
		return &client.Message{Payload: payload, Key: "k" + strconv.Itoa(i), Properties: map[string]string{
			client.PropertyRealTopic: origin, client.PropertyOriginMessageID: "1:" + strconv.Itoa(i) + ":0",
			client.PropertyReconsumeTimes: "16", "reason": "bench: a dead letter",
		}}
	}})
	return d, took, err
}

// benchReplay fills a fresh DLQ on the broker b with n dead letters and replays them.
func benchReplay(ctx context.Context, b *brokerProc, n int, progress func(string, ...any)) (r replayReport, err error) {
	r.n = n
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()

	progress("replay: producing %s dead letters of %d bytes, one entry each", thousands(n), payloadSize)
	d, fill, err := fillReplayDLQ(ctx, b, n)
	r.fill = fill
	if err != nil {
		return r, err
	}
	dlq, sub := d.topic, d.sub

	state, err := os.MkdirTemp("", "letterbox-bench-replay-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(state)
	rcl, err := client.New(client.Options{ServiceURL: b.serviceURL, OperationTimeout: 10 * time.Second, Logger: ourLogger})
	if err != nil {
		return r, err
	}
	defer rcl.Close()
	progress("replay: moving them back without a rate limit")
	w := workload{pid: b.pid()}
	cpu0, ours0, busy0, err := w.cpuSample()
	if err != nil {
		return r, err
	}
	t1 := time.Now()
	r.sum, err = replay.Run(ctx, rcl, replay.Options{DLQ: dlq, Subscription: sub, StateDir: state, Total: int64(n)})
	r.elapsed = time.Since(t1)
	if err != nil {
		return r, fmt.Errorf("replay: %w", err)
	}
	cpu1, ours1, busy1, err := w.cpuSample()
	if err != nil {
		return r, err
	}
	r.cpu = cpu1 - cpu0
	r.others = max(0, (busy1-busy0)-(ours1-ours0)).Seconds() / r.elapsed.Seconds()
	if !r.sum.OK() || r.sum.Moved != int64(n) {
		return r, fmt.Errorf("replay moved %d of %d (failed %d, skipped %d, complete %v)", r.sum.Moved, n, r.sum.Failed, r.sum.Skipped, r.sum.Complete)
	}
	r.measured = true
	return r, nil
}

// markdown renders the replay section: the unlimited run, then the rate-limited one.
func (r *replayReport) markdown(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## Replay\n\n")
	p("`client/replay` without a rate limit on `letterbox broker --in-memory` (deduplication off, upstream's default): a DLQ whose " +
		"subscription was created first, filled with 1 KiB dead letters, each its own entry as our client's DLQ producer writes them " +
		"(REAL_TOPIC, ORIGIN_MESSAGE_ID, RECONSUMETIMES and a reason property), then `replay.Run` reads them all through that subscription, " +
		"republishes each to its origin and acknowledges it once receipted. Timed from the call to its return (subscribing, " +
		"creating the producer and the final flush of acknowledgements included). Then the same at a rate limit (below the table).\n\n")
	p("| metric | measured | target | |\n|---|---|---|---|\n")
	r.unlimitedRow(b)
	r.limited.row(b)
	if r.measured {
		rs := make([]string, len(r.rounds))
		for i, v := range r.rounds {
			rs[i] = rate(v)
		}
		p("\nBest of %d rounds, each on a fresh DLQ (msg/s by round: %s): %s dead letters moved in %.2f s (broker CPU %.2f s, %.0f %% of one core; other processes used %.2f CPUs); producing them took %.2f s (%s msg/s, one entry each).\n",
			len(r.rounds), strings.Join(rs, ", "), thousands(int(r.sum.Moved)), r.elapsed.Seconds(), r.cpu.Seconds(), 100*r.cpu.Seconds()/r.elapsed.Seconds(), r.others,
			r.fill.Seconds(), rate(float64(r.n)/r.fill.Seconds()))
	}
	r.limited.notes(b)
}

// unlimitedRow is the table row of the run without a rate limit.
func (r *replayReport) unlimitedRow(b *strings.Builder) {
	if !r.measured {
		fmt.Fprintf(b, "| replay rate, 1 KiB dead letters | %s | ≥ 50,000 msg/s | not measured |\n", notMeasuredText)
		return
	}
	v := "not met"
	if r.rate() >= targetReplayRate {
		v = "met"
	}
	if r.others >= busyWarning {
		v += " (busy machine)"
	}
	fmt.Fprintf(b, "| replay rate, 1 KiB dead letters | %s msg/s | ≥ 50,000 msg/s | %s |\n", rate(r.rate()), v)
}
