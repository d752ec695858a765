package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/termtext"
)

// discardFlags are the flags of "letterbox dlq discard".
type discardFlags struct {
	subscription, until    string
	filters                filterList
	ids                    idList
	limit                  int64
	all, dryRun, yes, json bool
	notADLQ                bool
}

func (f *discardFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.subscription, "subscription", "", "acknowledge on subscription `S` (default: the DLQ's only durable one)")
	fs.Var(&f.filters, "filter", filterHelp)
	fs.Var(&f.ids, "ids", "select the letters `IDS` (ledger:entry or ledger:entry:partition:batch, comma-separated)")
	fs.Int64Var(&f.limit, "limit", 0, "select the first `N` letters the other flags select")
	fs.BoolVar(&f.notADLQ, "not-a-dlq", false, notADLQHelp)
	fs.BoolVar(&f.all, "all", false, "select every letter the subscription has not acknowledged (instead of --filter, --ids or --limit)")
	fs.StringVar(&f.until, "until", "", "take letters up to message `ID` only, as a --dry-run printed it (default: the DLQ's last message when the preview is made)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "show what would be discarded, and the --until that pins it; change nothing")
	fs.BoolVar(&f.yes, "yes", false, "do not ask: discard what the preview selects")
	fs.BoolVar(&f.json, "json", false, "write one JSON object per letter considered, then a summary, to stdout")
}

var dlqDiscard = dlqSub{cmd: "letterbox dlq discard", flags: []string{"subscription", "filter", "ids", "limit", "all", "until", "not-a-dlq", "dry-run", "yes", "json"},
	usage: `Usage: letterbox dlq discard DLQ [--subscription S] [--filter EXPR]... [--ids L:E,...] [--limit N]
                             [--all] [--until L:E] [--dry-run] [--yes] [--json] [client flags]

Acknowledges the letters of DLQ that the flags select on its subscription, one by one, so that
nothing else moves: they are gone for good. A selection is required, and never wider than
written: a blank --filter, an empty --ids or an empty item in one is refused (exit 2); every
letter is said with --all (or purge). First a preview reads the letters the subscription has
not acknowledged, without consuming, and counts what will go (letters: each message of a batch
one); then the command asks (on a terminal: "y", or the DLQ's name for more than 100 letters;
--yes answers for a script; without a terminal and --yes it does nothing, exit 2); then it
takes what the preview saw. The summary counts the letters up to the preview's last one that a
--limit or --ids selection left out, and apart from them the letters that died since the
preview (arrived), which are left. Taking some letters of a batch is refused (exit 2, nothing
acknowledged) on a broker that acknowledges whole entries only
(acknowledgmentAtBatchIndexLevelEnabled=false): they would come back; where the broker does
not say, the question warns. Afterwards the subscription's cursor is read back: a letter the
broker did not keep acknowledged is reported as failed, never as discarded. Exit 0 when
everything selected was discarded (or nothing was confirmed), 1 when something failed.

Flags:
`}

// discardSummary is the last line of --json.
type discardSummary struct {
	Summary      bool    `json:"summary"`
	DryRun       bool    `json:"dry_run"`
	DLQ          string  `json:"dlq"`
	Subscription string  `json:"subscription"`
	Selection    string  `json:"selection"`
	Selected     int64   `json:"selected"`
	WouldDiscard int64   `json:"would_discard,omitempty"`
	Discarded    int64   `json:"discarded"`
	Skipped      int64   `json:"skipped"`
	Failed       int64   `json:"failed"`
	Arrived      int64   `json:"arrived"`
	LeftOut      int64   `json:"left_out"`
	Until        string  `json:"until"`
	Complete     bool    `json:"complete"`
	OK           bool    `json:"ok"`
	Seconds      float64 `json:"seconds"`
}

func runDLQDiscard(ctx context.Context, cf *clientFlags, in stdin, args []string, stdout, stderr io.Writer) int {
	cmd := dlqDiscard.cmd
	var f discardFlags
	pos, code, ok := dlqDiscard.parse(cf, args, f.register, stdout, stderr)
	if !ok {
		return code
	}
	if code := oneDLQ(cmd, pos, stderr); code != ExitOK {
		return code
	}
	sel, code := parseSelection(cmd, f.filters, f.ids.ids, f.limit, stderr)
	if code != ExitOK {
		return code
	}
	switch {
	case f.all && !sel.empty():
		return usageError(stderr, cmd, errors.New("--all takes every letter: leave out --filter, --ids and --limit, or --all"))
	case sel.empty() && !f.all:
		return usageError(stderr, cmd, errors.New("which letters? select some with --filter, --ids or --limit, or say --all"))
	}
	until, err := parseUntil(f.until)
	if err != nil {
		return usageError(stderr, cmd, err)
	}
	if !f.dryRun {
		if code := cf.refuseReadOnly(cmd, "discard dead letters (--dry-run only shows what would go)", stderr); code != ExitOK {
			return code
		}
	}
	t, code := openTarget(ctx, cf, cmd, pos[0], f.subscription, f.notADLQ, stderr)
	if code != ExitOK {
		return code
	}
	defer t.Client.Close()

	started := time.Now()
	p, err := sel.preview(ctx, t, until, stderr)
	if err != nil {
		return scanFailed(ctx, stderr, cmd, t.Topic, err)
	}
	previewNotes(p, cmd, t.Sub, stderr)
	if !p.Cut {
		warnUnseen(stderr, cmd, sel.names)
	}
	n := int64(len(p.Letters))
	sum := discardSummary{Summary: true, DryRun: f.dryRun, DLQ: t.Topic, Subscription: t.Sub, Selection: sel.words(),
		Selected: n, Until: positionOf(p.Until), OK: true, Complete: true}
	if f.dryRun || n == 0 {
		writeDiscardPreview(p, &sum, &f, started, stdout)
		if n > 0 {
			return ExitOK
		}
		if !f.dryRun {
			cf.record(cmd, dlqops.HistoryEntry{When: started, Action: dlqops.ActionDiscard, DLQ: t.Topic, Subscription: t.Sub,
				Selection: sel.words(), Result: dlqops.ResultNothingSelected, Elapsed: time.Since(started)}, stderr)
		}
		if !f.json {
			return ExitNothing // the text preview said so
		}
		return nothingSelected(stderr, cmd, fmt.Sprintf("no letter of %s on %s is selected (%s)",
			shortTopic(t.Topic), termtext.Line(t.Sub), termtext.Line(sel.words())))
	}

	q := question{cmd: cmd, text: fmt.Sprintf("discard %s of %s via %s (%s)?", plural(n, "letter"), shortTopic(t.Topic), termtext.Line(t.Sub), sel.words())}
	if n > bigAction {
		q.name = localName(t.Topic)
	}
	if code, ok := askAboutBatches(ctx, t, cmd, p.Split(), "Select whole batches (--ids LEDGER:ENTRY takes every letter "+
		"of one), or have the broker keep batch-index acknowledgements.", &q, stderr); !ok {
		return code
	}
	if ok, code := in.confirm(q, f.yes, stderr); !ok {
		return code
	}

	started = time.Now()
	opts, err := t.Options(ctx, dlqops.Request{Discard: true, IDs: f.ids.text, Filters: f.filters, Limit: sel.limit,
		Until: &p.Until, Selected: n})
	if err != nil {
		printError(stderr, cmd, err)
		return ExitFailure
	}
	res, kept, err := discardLetters(ctx, t, opts, n, f.json, stdout, stderr)
	sum.Discarded, sum.Skipped, sum.Failed, sum.Arrived, sum.LeftOut = res.Discarded, res.Skipped, res.Failed, res.Arrived, res.LeftOut
	sum.Complete, sum.OK, sum.Seconds = res.Complete, res.OK() && err == nil, res.Elapsed.Seconds()
	writeDiscarded(res, &sum, f.json, stdout)
	if kept != "" {
		fmt.Fprintf(stderr, "%s: %s\n", cmd, kept)
	}
	e := dlqops.Entry(dlqops.ActionDiscard, t.Topic, t.Sub, sel.words(), res, dlqops.Result(res, err))
	e.When, e.Elapsed = started, time.Since(started)
	cf.record(cmd, e, stderr)
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(stderr, "%s: interrupted after %d discarded; the rest stays\n", cmd, res.Discarded)
		return ExitFailure
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return ExitFailure
	case !sum.OK:
		return ExitFailure
	}
	return ExitOK
}

// discardLetters acknowledges the n letters opts select with the engine, showing each as it
// goes (--json: one object each; else a failure on a line of its own, and a progress line on a
// terminal), then reads the subscription's cursor back: a letter the broker does not show
// acknowledged comes back, and counts as failed, not discarded. kept says what the read-back
// found ("" when every letter is acknowledged).
func discardLetters(ctx context.Context, t *dlqops.Target, opts dlqops.ReplayOptions, n int64, asJSON bool, stdout, stderr io.Writer) (res dlqops.Summary, kept string, err error) {
	cmd := dlqDiscard.cmd
	bar := !asJSON && isTerminal(stderr)
	var last time.Time
	var taken []client.MessageID
	res, err = dlqops.Run(ctx, t.Client, opts, func(ev dlqops.Event) {
		if ev.Action == dlqops.Discarded {
			taken = append(taken, ev.ID)
		}
		switch {
		case asJSON:
			json.NewEncoder(stdout).Encode(jsonEvent{ID: positionOf(ev.ID), Key: ev.Key, Action: string(ev.Action), Reason: ev.Reason})
		case ev.Action == dlqops.Failed:
			fmt.Fprintf(stderr, "\r\033[K%s: %s not discarded: %s\n", cmd, positionOf(ev.ID), termtext.Line(ev.Reason))
		case bar && time.Since(last) > 100*time.Millisecond:
			last = time.Now()
			fmt.Fprintf(stderr, "\r\033[K%d considered, discarded %d of %d, failed %d", ev.Progress.Considered, ev.Progress.Discarded, n, ev.Progress.Failed)
		}
	})
	if bar && !last.IsZero() {
		io.WriteString(stderr, "\r\033[K")
	}
	// What the broker kept: a letter it does not show acknowledged comes back, and is not
	// reported as discarded.
	if len(taken) > 0 {
		dropped, unknown, kerr := notKept(ctx, t, taken)
		if kerr == nil {
			res.Discarded -= dropped
			res.Failed += dropped
			kept = keptWords(dropped, unknown, t.Sub)
		}
	}
	return res, kept, err
}

// writeDiscarded writes what a discard did: the --json summary, or its line of text.
func writeDiscarded(res dlqops.Summary, sum *discardSummary, asJSON bool, stdout io.Writer) {
	if asJSON {
		json.NewEncoder(stdout).Encode(sum)
		return
	}
	fmt.Fprintf(stdout, "discarded %d of %d selected from %s via %s", res.Discarded, sum.Selected, shortTopic(sum.DLQ), sum.Subscription)
	if res.Failed > 0 {
		fmt.Fprintf(stdout, "; %d failed and stay", res.Failed)
	}
	if res.Complete {
		if res.LeftOut > 0 {
			fmt.Fprintf(stdout, "; %d left out up to %s (the selection was done before them)", res.LeftOut, sum.Until)
		}
		fmt.Fprintf(stdout, "; %d arrived since the preview and were left", res.Arrived)
	}
	io.WriteString(stdout, "\n")
}

// writeDiscardPreview writes what a dry run (or a run with nothing selected) found: each
// letter, then the count and the --until that pins them.
func writeDiscardPreview(p *dlqops.Preview, sum *discardSummary, f *discardFlags, started time.Time, stdout io.Writer) {
	n := int64(len(p.Letters))
	if f.json {
		enc := json.NewEncoder(stdout)
		for _, l := range p.Letters {
			enc.Encode(jsonEvent{ID: l.Pos.String(), Key: l.Key, Action: string(dlqops.WouldDiscard)})
		}
		if f.dryRun {
			sum.WouldDiscard = n
		}
		sum.Seconds = time.Since(started).Seconds()
		enc.Encode(sum)
		return
	}
	if n == 0 {
		fmt.Fprintf(stdout, "nothing to discard: no letter of %s unacknowledged on %s is selected (%s)\n",
			shortTopic(sum.DLQ), sum.Subscription, sum.Selection)
		return
	}
	for _, l := range p.Letters {
		line := "would discard " + l.Pos.String()
		if l.Key != "" {
			line += "  key " + termtext.Line(l.Key)
		}
		if l.Reason != "" {
			line += "  reason " + termtext.Line(strings.TrimSpace(l.Reason))
		}
		fmt.Fprintln(stdout, line)
	}
	fmt.Fprintf(stdout, "would discard %d letters of %s via %s (%s), up to %s\n", n, shortTopic(sum.DLQ), termtext.Line(sum.Subscription), sum.Selection, sum.Until)
	fmt.Fprintf(stdout, "to discard exactly these, run again without --dry-run and with --until %s\n", sum.Until)
}
