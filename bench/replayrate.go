package main

// The replay rate limit: the DLQ of replay.go replayed at replay.Options.Rate, which is what
// `letterbox replay --rate N` passes on unchanged. The engine is driven directly, as the
// unlimited run drives it, and every move is timed as the engine reports it (republish
// receipted, dead letter acknowledged), so that the rate measured is the one a user sees move.

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/replay"
)

const (
	// replayLimitRate is the rate asked for, msg/s; replayLimitN letters at it take ten seconds,
	// a thousand intervals: enough to see a drift of a few per cent, short enough for a shared
	// machine.
	replayLimitRate = 100
	replayLimitN    = 1_000
	// targetReplayRateError is the goal: the measured rate within ±10 % of the asked one.
	targetReplayRateError = 0.10
)

// replayLimitReport is what the rate-limited run measured; zero values were not measured.
type replayLimitReport struct {
	asked float64 // msg/s
	n     int     // dead letters in the DLQ
	fill  time.Duration
	// moves are the times the engine reported each move, in order.
	moves   []time.Time
	elapsed time.Duration // replay.Run, start to return
	others  float64       // CPUs other processes used during the run
	// measured is set once every letter moved.
	measured bool
}

// span is the time from the first move to the last.
func (r replayLimitReport) span() time.Duration {
	if len(r.moves) < 2 {
		return 0
	}
	return r.moves[len(r.moves)-1].Sub(r.moves[0])
}

// rate is the moves per second between the first move and the last: n moves span n-1 intervals,
// and counting n would add 1/n to the rate whatever the limiter does.
func (r replayLimitReport) rate() float64 {
	return float64(len(r.moves)-1) / r.span().Seconds()
}

// relErr is the measured rate's error relative to the asked one: -0.02 is 2 % slow.
func (r replayLimitReport) relErr() float64 { return r.rate()/r.asked - 1 }

// intervals returns the median and the longest time between two consecutive moves.
func (r replayLimitReport) intervals() (median, longest time.Duration) {
	d := make([]time.Duration, 0, len(r.moves))
	for i := 1; i < len(r.moves); i++ {
		d = append(d, r.moves[i].Sub(r.moves[i-1]))
	}
	if len(d) == 0 {
		return 0, 0
	}
	slices.Sort(d)
	return d[len(d)/2], d[len(d)-1]
}

// benchReplayLimit fills a fresh DLQ on the broker b with replayLimitN dead letters and
// replays them at replayLimitRate, timing every move.
func benchReplayLimit(ctx context.Context, b *brokerProc, progress func(string, ...any)) (r replayLimitReport, err error) {
	r.asked, r.n = replayLimitRate, replayLimitN
	progress("replay: producing %s dead letters of %d bytes for the run at %d msg/s", thousands(r.n), payloadSize, replayLimitRate)
	d, fill, err := fillReplayDLQ(ctx, b, r.n)
	r.fill = fill
	if err != nil {
		return r, err
	}
	state, err := os.MkdirTemp("", "letterbox-bench-replay-")
	if err != nil {
		return r, fmt.Errorf("replay state directory: %w", err)
	}
	defer os.RemoveAll(state)
	rcl, err := client.New(client.Options{ServiceURL: b.serviceURL, OperationTimeout: 10 * time.Second, Logger: ourLogger})
	if err != nil {
		return r, fmt.Errorf("replay client: %w", err)
	}
	defer rcl.Close()

	// Twice the time the rate asks for, and the setup: a limiter that is far too slow fails
	// the run rather than holding the bench.
	want := time.Duration(float64(r.n) / r.asked * float64(time.Second))
	ctx, cancel := context.WithTimeout(ctx, 2*want+setupTimeout)
	defer cancel()

	w := workload{pid: b.pid()}
	_, ours0, busy0, err := w.cpuSample()
	if err != nil {
		return r, err
	}
	// Unbuffered, so that a move is timed when the engine reports it: Run blocks until the
	// event is taken, and this goroutine takes each at once. Run closes the channel before
	// it returns, which ends the goroutine.
	events := make(chan replay.Event)
	moves := make([]time.Time, 0, r.n)
	taken := make(chan struct{})
	go func() {
		defer close(taken)
		for ev := range events {
			if ev.Action == replay.Moved {
				moves = append(moves, time.Now())
			}
		}
	}()
	progress("replay: moving them back at %d msg/s (about %v)", replayLimitRate, want)
	t0 := time.Now()
	sum, err := replay.Run(ctx, rcl, replay.Options{DLQ: d.topic, Subscription: d.sub, StateDir: state, Total: int64(r.n),
		Rate: r.asked, Events: events})
	r.elapsed = time.Since(t0)
	<-taken
	r.moves = moves
	if err != nil {
		return r, fmt.Errorf("replay at %v msg/s: %w", r.asked, err)
	}
	_, ours1, busy1, err := w.cpuSample()
	if err != nil {
		return r, err
	}
	r.others = max(0, (busy1-busy0)-(ours1-ours0)).Seconds() / r.elapsed.Seconds()
	if !sum.OK() || sum.Moved != int64(r.n) || len(r.moves) != r.n {
		return r, fmt.Errorf("replay at %v msg/s moved %d of %d (%d move events; failed %d, skipped %d, complete %v)",
			r.asked, sum.Moved, r.n, len(r.moves), sum.Failed, sum.Skipped, sum.Complete)
	}
	r.measured = true
	return r, nil
}

// metric is the run's name in the replay table.
func (r *replayLimitReport) metric() string {
	return fmt.Sprintf("replay rate at `--rate %d`, 1 KiB dead letters", replayLimitRate)
}

// row writes the run's row of the replay table.
func (r *replayLimitReport) row(b *strings.Builder) {
	target := fmt.Sprintf("within ±%.0f %% of %d msg/s", 100*targetReplayRateError, replayLimitRate)
	if !r.measured {
		fmt.Fprintf(b, "| %s | %s | %s | not measured |\n", r.metric(), notMeasuredText, target)
		return
	}
	v := "not met"
	if e := r.relErr(); e >= -targetReplayRateError && e <= targetReplayRateError {
		v = "met"
	}
	if r.others >= busyWarning {
		v += " (busy machine)"
	}
	fmt.Fprintf(b, "| %s | %.1f msg/s (%s %% off the %d asked) | %s | %s |\n", r.metric(), r.rate(), signed(100*r.relErr(), 1), replayLimitRate, target, v)
}

// notes writes how the rate-limited run was taken and what else it saw.
func (r *replayLimitReport) notes(b *strings.Builder) {
	if !r.measured {
		return
	}
	median, longest := r.intervals()
	fmt.Fprintf(b, "\nAt a rate limit: `replay.Run` itself with `Options.Rate` = %d, the value `letterbox replay --rate %d` passes on unchanged "+
		"(the engine, not the binary, as in the run above), on a fresh DLQ of %s such letters. "+
		"Asked %d msg/s, measured %.2f msg/s: %s intervals from the first move to the last in %.2f s, a move timed when the engine reports it "+
		"(republish receipted, dead letter acknowledged); relative error %s %%. Between two moves: median %.2f ms, longest %.2f ms. "+
		"The call took %.2f s in all; other processes used %.2f CPUs; producing the letters took %.2f s.\n",
		replayLimitRate, replayLimitRate, thousands(r.n), replayLimitRate, r.rate(), thousands(len(r.moves)-1), r.span().Seconds(),
		signed(100*r.relErr(), 2), millis(median), millis(longest), r.elapsed.Seconds(), r.others, r.fill.Seconds())
}

// signed formats x with its sign and the given decimals, without the "-0.0" of a tiny negative.
func signed(x float64, decimals int) string {
	s := strconv.FormatFloat(x, 'f', decimals, 64)
	if strings.Trim(s, "-0.") == "" {
		return "±" + strings.TrimPrefix(s, "-")
	}
	if x > 0 {
		return "+" + s
	}
	return s
}
