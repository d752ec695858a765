package main

// The replay rate: dead letters of 1 KiB, each its own entry as our client's DLQ producer
// writes them (REAL_TOPIC and the other properties of a dead letter), kept by the DLQ's
// subscription, then moved back to their origin by client/replay without a rate limit. The
// same DLQ at a rate limit is replayrate.go's.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/replay"
)

// Targets from issues 22 and 36: with deduplication on, the broker checks every sequence id and
// the replay batches as without, so it keeps most of the rate it has without.
const (
	targetReplayRate       = 150_000
	targetReplayDedupRatio = 0.8
)

// replayReport is what the replay runs measured; zero values were not measured.
type replayReport struct {
	n      int           // dead letters in each round's DLQ
	rounds []replayRound // every round that moved them all, in order
	// dedup are the rounds on a broker with brokerDeduplicationEnabled, the replay told so,
	// each run right after the round of rounds with the same index.
	dedup []replayRound
	// limited is the run at a rate limit (replayrate.go).
	limited replayLimitReport
}

// replayRound is one round: a fresh DLQ filled, then replayed on the same broker.
type replayRound struct {
	n       int           // dead letters in the DLQ
	fill    time.Duration // producing them, just before the replay
	elapsed time.Duration // replay.Run, start to return
	sum     replay.Summary
	cpu     time.Duration // broker CPU during the replay
	others  float64
}

func (r replayRound) rate() float64     { return float64(r.sum.Moved) / r.elapsed.Seconds() }
func (r replayRound) fillRate() float64 { return float64(r.n) / r.fill.Seconds() }

// series is f of every round.
func (r *replayReport) series(f func(replayRound) float64) []float64 {
	return perRound(r.rounds, func(rr replayRound) (float64, bool) { return f(rr), true })
}

// fillRatios are every round's replay rate over the rate its letters were produced at, just
// before, on the same broker.
func (r *replayReport) fillRatios() []float64 {
	return perRound(r.rounds, func(rr replayRound) (float64, bool) { return ratioOf(rr.rate(), rr.fillRate()) })
}

// dedupRatios are every round's replay rate with deduplication over the rate without it in
// the same round.
func (r *replayReport) dedupRatios() []float64 {
	var out []float64
	for i := range min(len(r.rounds), len(r.dedup)) {
		if x, ok := ratioOf(r.dedup[i].rate(), r.rounds[i].rate()); ok {
			out = append(out, x)
		}
	}
	return out
}

// measureReplay runs the replay's rounds, each on a fresh DLQ filled just before its replay
// (the fill is the reference the replay's round is put beside): on the broker b, then with
// deduplication on a broker of bin of its own; then the run at a rate limit.
func measureReplay(ctx context.Context, r *replayReport, b *brokerProc, bin string, o options, progress func(string, ...any), failed func(string, error)) {
	r.n = o.replayN
	db, stopDedup, err := startDedupBroker(ctx, bin)
	if err != nil {
		failed("replay with deduplication: starting the broker", err)
	}
	defer stopDedup()
	for i := range o.rounds {
		progress("replay [round %d/%d]", i+1, o.rounds)
		rr, err := benchReplay(ctx, b, o.replayN, false, progress)
		if err != nil {
			failed("replay", err)
			break
		}
		r.rounds = append(r.rounds, rr)
		if db == nil || ctx.Err() != nil {
			continue
		}
		progress("replay with deduplication [round %d/%d]", i+1, o.rounds)
		dr, err := benchReplay(ctx, db, o.replayN, true, progress)
		if err != nil {
			failed("replay with deduplication", err)
			db = nil
			continue
		}
		r.dedup = append(r.dedup, dr)
	}
	// Then once at a rate limit, on a fresh DLQ: its figure is the limiter's accuracy, which
	// rounds would not sharpen.
	if ctx.Err() == nil {
		progress("replay at %d msg/s", replayLimitRate)
		if r.limited, err = benchReplayLimit(ctx, b, progress); err != nil {
			failed(fmt.Sprintf("replay at --rate %d", replayLimitRate), err)
		}
	}
}

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
func benchReplay(ctx context.Context, b *brokerProc, n int, dedup bool, progress func(string, ...any)) (r replayRound, err error) {
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
	r.sum, err = replay.Run(ctx, rcl, replay.Options{DLQ: dlq, Subscription: sub, StateDir: state, Total: int64(n), Deduplication: dedup})
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
	return r, nil
}

// markdown renders the replay section: the unlimited run, then the rate-limited one.
func (r *replayReport) markdown(b *strings.Builder) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## Replay\n\n")
	p("`client/replay` without a rate limit on `letterbox broker --in-memory`, started for this part (the headline's broker holds the backlog its producer-only run left, which made its every message dearer), deduplication off, upstream's default: a DLQ whose " +
		"subscription was created first, filled with 1 KiB dead letters, each its own entry as our client's DLQ producer writes them " +
		"(REAL_TOPIC, ORIGIN_MESSAGE_ID, RECONSUMETIMES and a reason property), then `replay.Run` reads them all through that subscription, " +
		"republishes each to its origin and acknowledges it once receipted. Timed from the call to its return (subscribing, " +
		"creating the producer and the final flush of acknowledgements included). The row with deduplication: the same rounds on a " +
		"broker of its own started with `brokerDeduplicationEnabled=true`, the replay told so (`Options.Deduplication`: exactly once, " +
		"one producer name per run, sequence ids from the letters' message ids), each round right after the round without on a fresh DLQ of its own; " +
		"its verdict is the median of the rounds' ratios of the two rates. Then the same at a rate limit (below the table).\n\n")
	p("| metric | measured | target | |\n|---|---|---|---|\n")
	r.unlimitedRow(b, "replay rate, 1 KiB dead letters", r.rounds, targetReplayRate)
	r.unlimitedRow(b, "replay rate, deduplication on", r.dedup, 0)
	if ratios := r.dedupRatios(); len(ratios) > 0 {
		v := metText(medianF(ratios) >= targetReplayDedupRatio)
		if slices.ContainsFunc(append(slices.Clone(r.rounds), r.dedup...), func(rr replayRound) bool { return rr.others >= busyWarning }) {
			v += " (busy machine)"
		}
		p("| replay rate with deduplication / without (%s) | %s | ≥ %.0f %% | %s |\n", ofRatios(len(ratios)), byRound(ratios, percent, ""),
			100*targetReplayDedupRatio, v)
	} else {
		p("| replay rate with deduplication / without | %s | ≥ %.0f %% | not measured |\n", notMeasuredText, 100*targetReplayDedupRatio)
	}
	if ratios := r.fillRatios(); len(ratios) > 0 {
		p("| replay / producing the letters (%s) | %s | | |\n", ofRatios(len(ratios)), byRound(ratios, times, ""))
	} else {
		p("| replay / producing the letters | %s | | |\n", notMeasuredText)
	}
	r.limited.row(b)
	if len(r.rounds) > 0 {
		secs := func(f func(replayRound) time.Duration) float64 {
			return medianF(r.series(func(rr replayRound) float64 { return f(rr).Seconds() }))
		}
		var others float64
		for _, rr := range r.rounds {
			others = max(others, rr.others)
		}
		lead := fmt.Sprintf("%d rounds, each", len(r.rounds))
		if len(r.rounds) == 1 {
			lead = "One round,"
		}
		p("\n%s on a fresh DLQ of %s dead letters that our client produced on the same broker just before the round's "+
			"replay (one entry each, as fast as its window of receipts allows, timed from the first send to the last receipt): that fill "+
			"is the reference of the ratio above, each round's replay rate over its own fill's rate. Medians of the rounds: the replay took "+
			"%.2f s, with broker CPU %.2f s (%.0f %% of one core), and producing the letters %.2f s, at %s. "+
			"Other processes used up to %.2f CPUs during the replays.\n",
			lead, thousands(r.n), secs(func(rr replayRound) time.Duration { return rr.elapsed }),
			secs(func(rr replayRound) time.Duration { return rr.cpu }),
			100*medianF(r.series(func(rr replayRound) float64 { return rr.cpu.Seconds() / rr.elapsed.Seconds() })),
			secs(func(rr replayRound) time.Duration { return rr.fill }), byRound(r.series(replayRound.fillRate), rate, " msg/s"), others)
	}
	r.limited.notes(b)
}

// unlimitedRow is a table row of runs without a rate limit: the median of rounds, against
// target (0: a rate shown beside another, without a target of its own).
func (r *replayReport) unlimitedRow(b *strings.Builder, what string, rounds []replayRound, target int) {
	goal := "" // a rate beside another, without a target of its own
	if target > 0 {
		goal = "≥ " + thousands(target) + " msg/s"
	}
	if len(rounds) == 0 {
		fmt.Fprintf(b, "| %s | %s | %s | not measured |\n", what, notMeasuredText, goal)
		return
	}
	rates := perRound(rounds, func(rr replayRound) (float64, bool) { return rr.rate(), true })
	v := ""
	if target > 0 {
		v = metText(medianF(rates) >= float64(target))
	}
	for _, rr := range rounds {
		if rr.others >= busyWarning {
			v += " (busy machine)"
			break
		}
	}
	fmt.Fprintf(b, "| %s (%s) | %s | %s | %s |\n", what, ofRounds(len(rates)), byRound(rates, rate, " msg/s"), goal, v)
}

// startDedupBroker starts a broker of bin of its own with brokerDeduplicationEnabled; stop
// stops it and removes its configuration (also after an error).
func startDedupBroker(ctx context.Context, bin string) (b *brokerProc, stop func(), err error) {
	dir, err := os.MkdirTemp("", "letterbox-bench-dedup-")
	if err != nil {
		return nil, func() {}, err
	}
	stop = func() { os.RemoveAll(dir) }
	conf := filepath.Join(dir, "broker.conf")
	if err := os.WriteFile(conf, []byte("brokerDeduplicationEnabled=true\n"), 0o644); err != nil {
		return nil, stop, err
	}
	if b, err = startBroker(ctx, bin, "--in-memory", "--config", conf); err != nil {
		return nil, stop, err
	}
	return b, func() { b.stop(); os.RemoveAll(dir) }, nil
}
