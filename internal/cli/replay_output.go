package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/termtext"
)

// What "letterbox replay" writes: its events, its progress bar, its summary and its entry in
// the replay history.

// jsonEvent is one line of --json output.
type jsonEvent struct {
	ID          string `json:"id"`
	Key         string `json:"key,omitempty"`
	Destination string `json:"destination,omitempty"`
	Action      string `json:"action"`
	Reason      string `json:"reason,omitempty"`
}

// eventShower writes each event of a run as JSON (--json), or draws a progress bar on a
// terminal, and counts the letters by destination. Its show is called from the run's event
// goroutine, in order; finish once the run has ended.
type eventShower struct {
	rf     *replayFlags
	dryRun bool
	stdout io.Writer
	stderr io.Writer
	enc    *json.Encoder
	bar    bool
	dests  destinations
	last   time.Time
	lastEv dlqops.Event
	drawn  bool
}

func newEventShower(rf *replayFlags, dryRun bool, stdout, stderr io.Writer) *eventShower {
	return &eventShower{rf: rf, dryRun: dryRun, stdout: stdout, stderr: stderr, enc: json.NewEncoder(stdout),
		bar: !rf.json && isTerminal(stderr), dests: destinations{}}
}

func (s *eventShower) show(ev dlqops.Event) {
	s.dests.note(ev)
	if s.rf.json {
		s.enc.Encode(jsonEvent{ID: ev.IDString(), Key: ev.Key, Destination: ev.Destination, Action: string(ev.Action), Reason: ev.Reason})
		return
	}
	crossTenant := strings.HasPrefix(ev.Reason, dlqops.CrossTenantReason) // listed with the destinations
	if !crossTenant && (ev.Action == dlqops.Failed || (ev.Reason != "" && !strings.HasPrefix(ev.Reason, "not selected"))) {
		if s.drawn {
			io.WriteString(s.stderr, "\r\033[K")
		}
		fmt.Fprintf(s.stderr, "%s %s: %s\n", ev.IDString(), ev.Action, termtext.Line(ev.Reason))
	}
	s.lastEv = ev
	if s.bar && time.Since(s.last) > 100*time.Millisecond {
		s.last = time.Now()
		drawBar(s.stderr, ev.Progress, s.dryRun)
		s.drawn = true
	}
}

// finish ends the progress bar and says where the letters went.
func (s *eventShower) finish() destinations {
	if s.drawn {
		drawBar(s.stderr, s.lastEv.Progress, s.dryRun)
		io.WriteString(s.stderr, "\n")
	}
	return s.dests
}

func drawBar(w io.Writer, p dlqops.ReplayProgress, dryRun bool) {
	const width = 30
	bar := ""
	if p.Total > 0 {
		done := min(int(p.Considered*width/p.Total), width)
		bar = fmt.Sprintf("[%s%s] %3d%% ", strings.Repeat("#", done), strings.Repeat(".", width-done), min(p.Considered*100/p.Total, 100))
	}
	moved := fmt.Sprintf("moved %d", p.Moved)
	if dryRun {
		moved = fmt.Sprintf("would move %d", p.WouldMove)
	}
	eta := ""
	if p.ETA > 0 {
		eta = " ETA " + p.ETA.Round(time.Second).String()
	}
	// The rate counts letters moved (in a dry run: found movable), not letters looked at.
	fmt.Fprintf(w, "\r\033[K%s%d considered, %s, skipped %d, failed %d, %.1f letters/s%s", bar, p.Considered, moved, p.Skipped, p.Failed, p.Rate, eta)
}

// jsonSummary is the last line of --json output.
type jsonSummary struct {
	Summary      bool    `json:"summary"`
	Run          string  `json:"run,omitempty"`
	Resumed      bool    `json:"resumed"`
	DryRun       bool    `json:"dry_run"`
	Subscription string  `json:"subscription"`
	Considered   int64   `json:"considered"`
	Moved        int64   `json:"moved"`
	WouldMove    int64   `json:"would_move"`
	Skipped      int64   `json:"skipped"`
	Guarded      int64   `json:"guarded"`
	Failed       int64   `json:"failed"`
	Arrived      int64   `json:"arrived"`
	LeftOut      int64   `json:"left_out"`
	Until        string  `json:"until,omitempty"`
	Complete     bool    `json:"complete"`
	OK           bool    `json:"ok"`
	Delivery     string  `json:"delivery"`
	Seconds      float64 `json:"seconds"`
	// Destinations counts the letters moved (would move) by destination; CrossTenant those
	// left for being bound to another tenant without --allow-cross-tenant.
	Destinations map[string]int64 `json:"destinations,omitempty"`
	CrossTenant  map[string]int64 `json:"cross_tenant_refused,omitempty"`
}

func writeSummary(sum dlqops.Summary, rf *replayFlags, opts dlqops.ReplayOptions, dests destinations, stdout io.Writer) {
	delivery := "at least once (deduplication is off: a resumed run may publish some messages twice)"
	if sum.ExactlyOnce {
		delivery = "exactly once (the broker deduplicates)"
	}
	if sum.DryRun {
		delivery = "none (dry run)"
	}
	until := ""
	if opts.Until != nil {
		until = positionOf(*opts.Until)
	}
	last := until // the run's last message, for the counts of what it left
	if last == "" && sum.Until.Entry >= 0 {
		last = positionOf(sum.Until)
	}
	if rf.json {
		moved, crossTenant := dests.counts()
		json.NewEncoder(stdout).Encode(jsonSummary{Summary: true, Run: sum.Run, Resumed: sum.Resumed, DryRun: sum.DryRun,
			Subscription: opts.Subscription, Considered: sum.Considered, Moved: sum.Moved, WouldMove: sum.WouldMove,
			Skipped: sum.Skipped, Guarded: sum.Guarded, Failed: sum.Failed, Arrived: sum.Arrived, LeftOut: sum.LeftOut, Until: until,
			Complete: sum.Complete, OK: sum.OK(), Delivery: delivery, Seconds: sum.Elapsed.Seconds(),
			Destinations: moved, CrossTenant: crossTenant})
		return
	}
	verb := "moved " + strconv.FormatInt(sum.Moved, 10)
	if sum.DryRun {
		verb = "would move " + strconv.FormatInt(sum.WouldMove, 10)
	}
	fmt.Fprintf(stdout, "%s of %d considered from %s (subscription %s); skipped %d (loop guard %d), failed %d, in %s\n",
		verb, sum.Considered, termtext.Line(opts.DLQ), termtext.Line(opts.Subscription), sum.Skipped, sum.Guarded, sum.Failed, sum.Elapsed.Round(time.Millisecond))
	dests.write(stdout, opts.DLQ, sum.DryRun)
	if !sum.DryRun && sum.Run != "" {
		resumed := ""
		if sum.Resumed {
			resumed = ", resumed"
		}
		fmt.Fprintf(stdout, "run %s%s; delivery %s\n", sum.Run, resumed, delivery)
	}
	if sum.LeftOut > 0 {
		fmt.Fprintf(stdout, "%d dead letters up to %s were left out: the selection was done before them\n", sum.LeftOut, orLast(last))
	}
	if sum.Arrived > 0 {
		fmt.Fprintf(stdout, "%d dead letters arrived after %s and were left\n", sum.Arrived, orLast(last))
	}
	if sum.DryRun && until != "" && rf.until == "" {
		fmt.Fprintf(stdout, "to move exactly these, run again without --dry-run and with --until %s\n", until)
	}
	if !sum.Complete {
		io.WriteString(stdout, "not complete: run the same command again to continue\n")
	}
}

// recordHistory adds a real run to the replay history the TUI's dead-letter screen lists, so
// whoever is on call next sees what was already put back.
func recordHistory(opts dlqops.ReplayOptions, rf *replayFlags, cf *clientFlags, sum dlqops.Summary, err error, started time.Time, stderr io.Writer) {
	e := dlqops.Entry(dlqops.ActionReplay, opts.DLQ, opts.Subscription, replaySelection(opts, rf), sum, dlqops.Result(sum, err))
	e.When, e.Elapsed = started, time.Since(started)
	cf.record("letterbox replay", e, stderr)
}

// replaySelection is a replay's selection in words, as the history and the messages say it.
func replaySelection(opts dlqops.ReplayOptions, rf *replayFlags) string {
	var parts []string
	if len(opts.Selection.IDs) > 0 {
		parts = append(parts, fmt.Sprintf("%d listed ids", len(opts.Selection.IDs)))
	}
	parts = append(parts, rf.filters...)
	if opts.Selection.Limit > 0 {
		parts = append(parts, fmt.Sprintf("limit %d", opts.Selection.Limit))
	}
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, ", ")
}

// orLast names the run's last message, or says it was the DLQ's last at the start.
func orLast(until string) string {
	if until == "" {
		return "the DLQ's last message at the start"
	}
	return until
}
