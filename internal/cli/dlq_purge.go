package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/letterbox-dev/letterbox/client/replay"
	"github.com/letterbox-dev/letterbox/client/termtext"
)

// purgeFlags are the flags of "letterbox dlq purge".
type purgeFlags struct {
	subscription       string
	count              int64
	yes, json, notADLQ bool
}

func (f *purgeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.subscription, "subscription", "", "purge subscription `S` (default: the DLQ's only durable one)")
	fs.Int64Var(&f.count, "count", 0, "skip only the first `N` letters of the backlog (default: all of it)")
	fs.BoolVar(&f.notADLQ, "not-a-dlq", false, notADLQHelp)
	fs.BoolVar(&f.yes, "yes", false, "do not ask")
	fs.BoolVar(&f.json, "json", false, "write the outcome as one JSON object to stdout")
}

var dlqPurge = dlqSub{cmd: "letterbox dlq purge", flags: []string{"subscription", "count", "not-a-dlq", "yes", "json"},
	usage: `Usage: letterbox dlq purge DLQ [--subscription S] [--count N] [--yes] [--json] [client flags]

Throws away dead letters for good, through the admin API: without --count, the subscription's
whole backlog (letters that arrive meanwhile included); with --count N, the first N letters of
it. The command asks first, on a terminal: purging everything, or more than 100 letters, wants
the DLQ's name typed (orders-billing-DLQ), fewer a "y"; --yes answers for a script; without a
terminal and --yes it does nothing (exit 2). It reports the backlog before and after.

Flags:
`}

// purgeResult is the output of --json.
type purgeResult struct {
	Action        string  `json:"action"` // "purge" or "skip"
	DLQ           string  `json:"dlq"`
	Subscription  string  `json:"subscription"`
	Count         int64   `json:"count,omitempty"`
	BacklogBefore int64   `json:"backlog_before"`
	BacklogAfter  int64   `json:"backlog_after"` // -1 when the stats could not be read
	OK            bool    `json:"ok"`
	Error         string  `json:"error,omitempty"`
	Seconds       float64 `json:"seconds"`
}

func runDLQPurge(ctx context.Context, cf *clientFlags, in stdin, args []string, stdout, stderr io.Writer) int {
	cmd := dlqPurge.cmd
	var f purgeFlags
	pos, code, ok := dlqPurge.parse(cf, args, f.register, stdout, stderr)
	if !ok {
		return code
	}
	if code := oneDLQ(cmd, pos, stderr); code != ExitOK {
		return code
	}
	if f.count < 0 {
		return usageError(stderr, cmd, errors.New("--count must not be negative"))
	}
	if code := cf.refuseReadOnly(cmd, "purge dead letters", stderr); code != ExitOK {
		return code
	}
	t, code := openTarget(ctx, cf, cmd, pos[0], f.subscription, f.notADLQ, stderr)
	if code != ExitOK {
		return code
	}
	defer t.cl.Close()

	res := purgeResult{Action: replay.ActionPurge, DLQ: t.topic, Subscription: t.sub, Count: f.count, BacklogBefore: t.backlog()}
	selection := "everything"
	if f.count > 0 {
		res.Action, selection = replay.ActionSkip, fmt.Sprintf("first %d", f.count)
	}
	if res.BacklogBefore == 0 {
		res.OK = true
		writePurge(res, f.json, stdout)
		cf.record(cmd, replay.HistoryEntry{When: time.Now(), Action: res.Action, DLQ: t.topic, Subscription: t.sub,
			Selection: selection, Result: replay.ResultNothingSelected}, stderr)
		return ExitNothing // writePurge said so
	}
	q := question{cmd: cmd, name: localName(t.topic),
		text: fmt.Sprintf("purge %s: acknowledge all %d letters on %s, and any that arrive meanwhile?", shortTopic(t.topic), res.BacklogBefore, termtext.Line(t.sub))}
	if f.count > 0 {
		q.text = fmt.Sprintf("skip the first %d of the %d letters of %s on %s?", f.count, res.BacklogBefore, shortTopic(t.topic), termtext.Line(t.sub))
		if f.count <= bigAction {
			q.name = ""
		}
	}
	if ok, code := in.confirm(q, f.yes, stderr); !ok {
		return code
	}

	started := time.Now()
	var err error
	if f.count > 0 {
		err = t.ad.SkipMessages(ctx, t.topic, t.sub, f.count)
	} else {
		err = t.ad.ClearBacklog(ctx, t.topic, t.sub)
	}
	if err != nil {
		err = fmt.Errorf("%s %s on %s: %w", res.Action, t.topic, t.sub, err)
	}
	res.BacklogAfter = -1 // unknown until the stats say
	if serr := t.refresh(ctx); serr == nil {
		res.BacklogAfter = t.backlog()
	} else if err == nil {
		fmt.Fprintf(stderr, "%s: backlog after: %v\n", cmd, serr)
	}
	res.OK, res.Seconds = err == nil, time.Since(started).Seconds()
	if err != nil {
		res.Error = err.Error()
	}
	writePurge(res, f.json, stdout)
	cf.record(cmd, replay.HistoryEntry{When: started, Action: res.Action, DLQ: t.topic, Subscription: t.sub,
		Selection: selection, Discarded: max(res.BacklogBefore-max(res.BacklogAfter, 0), 0),
		Result: resultOf(ctx, err), Elapsed: time.Since(started)}, stderr)
	if err != nil {
		printError(stderr, cmd, err)
		return ExitFailure
	}
	return ExitOK
}

func writePurge(r purgeResult, asJSON bool, stdout io.Writer) {
	if asJSON {
		json.NewEncoder(stdout).Encode(r)
		return
	}
	name, sub := shortTopic(r.DLQ), termtext.Line(r.Subscription)
	after := strconv.FormatInt(r.BacklogAfter, 10)
	if r.BacklogAfter < 0 {
		after = "unknown"
	}
	switch {
	case r.BacklogBefore == 0:
		fmt.Fprintf(stdout, "nothing to purge: %s has no backlog on %s\n", name, sub)
	case !r.OK:
		fmt.Fprintf(stdout, "%s of %s via %s failed; backlog %d before\n", r.Action, name, sub, r.BacklogBefore)
	case r.Action == replay.ActionSkip:
		fmt.Fprintf(stdout, "skipped the first %d letters of %s via %s: backlog %d → %s\n", r.Count, name, sub, r.BacklogBefore, after)
	default:
		fmt.Fprintf(stdout, "purged %s via %s: backlog %d → %s\n", name, sub, r.BacklogBefore, after)
	}
}
