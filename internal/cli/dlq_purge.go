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

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
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
	fs.Int64Var(&f.count, "count", 0, "acknowledge only the first `N` letters of the backlog (default: all of it)")
	fs.BoolVar(&f.notADLQ, "not-a-dlq", false, notADLQHelp)
	fs.BoolVar(&f.yes, "yes", false, "do not ask")
	fs.BoolVar(&f.json, "json", false, "write the outcome as one JSON object to stdout")
}

var dlqPurge = dlqSub{cmd: "letterbox dlq purge", flags: []string{"subscription", "count", "not-a-dlq", "yes", "json"},
	usage: `Usage: letterbox dlq purge DLQ [--subscription S] [--count N] [--yes] [--json] [client flags]

Throws away dead letters for good: without --count, the subscription's whole backlog (letters
that arrive meanwhile included), through the admin API; with --count N, the first N letters
of it — letters, each message of a batch one — acknowledged one by one as discard does (the
admin API's skip counts entries, a batch being one). Taking part of a batch is refused
(exit 2, nothing acknowledged) on a broker that acknowledges whole entries only
(acknowledgmentAtBatchIndexLevelEnabled=false), with the counts that end on whole batches.
The command asks first, on a terminal: purging everything, or more than 100 letters, wants
the DLQ's name typed (orders-billing-DLQ), fewer a "y"; --yes answers for a script; without
a terminal and --yes it does nothing (exit 2). It reports the backlog before and after, in
letters ("≈ N entries" where the broker counts none). With --json, one object: action
("purge" or "skip"), dlq, subscription, count, letters_before and letters_after (null where
the broker does not count letters), backlog_before and backlog_after (entries; -1 after when
unknown), skipped (letters acknowledged by --count), ok, error, seconds.

Flags:
`}

// purgeResult is the output of --json.
type purgeResult struct {
	Action        string  `json:"action"` // "purge" or "skip"
	DLQ           string  `json:"dlq"`
	Subscription  string  `json:"subscription"`
	Count         int64   `json:"count,omitempty"`
	LettersBefore *int64  `json:"letters_before"`
	LettersAfter  *int64  `json:"letters_after"`
	BacklogBefore int64   `json:"backlog_before"` // entries
	BacklogAfter  int64   `json:"backlog_after"`  // entries; -1 when the stats could not be read
	Skipped       int64   `json:"skipped,omitempty"`
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
	defer t.Client.Close()

	before := t.Backlog()
	res := purgeResult{Action: dlqops.ActionPurge, DLQ: t.Topic, Subscription: t.Sub, Count: f.count,
		LettersBefore: lettersOf(before), BacklogBefore: before.Entries}
	selection := "everything"
	if f.count > 0 {
		res.Action, selection = dlqops.ActionSkip, fmt.Sprintf("first %d", f.count)
	}
	if before.Entries == 0 {
		res.OK, res.LettersAfter = true, new(int64)
		writePurge(res, f.json, stdout)
		cf.record(cmd, dlqops.HistoryEntry{When: time.Now(), Action: res.Action, DLQ: t.Topic, Subscription: t.Sub,
			Selection: selection, Result: dlqops.ResultNothingSelected}, stderr)
		return ExitNothing // writePurge said so
	}
	if f.count > 0 {
		return skipLetters(ctx, cf, in, t, &f, res, stdout, stderr)
	}
	q := question{cmd: cmd, name: localName(t.Topic),
		text: fmt.Sprintf("purge %s: acknowledge all %s on %s, and any that arrive meanwhile?", shortTopic(t.Topic), backlogWords(before), termtext.Line(t.Sub))}
	if ok, code := in.confirm(q, f.yes, stderr); !ok {
		return code
	}
	started := time.Now()
	_, err := dlqops.Purge(ctx, t.Admin, t.Topic, t.Sub)
	if err != nil {
		err = fmt.Errorf("%s %s on %s: %w", res.Action, t.Topic, t.Sub, err)
	}
	res.Skipped = 0
	return finishPurge(ctx, cf, t, res, selection, started, err, f.json, stdout, stderr)
}

// skipLetters acknowledges the first f.count letters of t's subscription, as a discard of the
// first N does: previewed, checked against what the broker does with part of a batch, asked
// about, taken by the engine and read back.
func skipLetters(ctx context.Context, cf *clientFlags, in stdin, t *dlqops.Target, f *purgeFlags, res purgeResult, stdout, stderr io.Writer) int {
	cmd := dlqPurge.cmd
	p, err := selection{limit: f.count}.preview(ctx, t, nil, stderr)
	if err != nil {
		return scanFailed(ctx, stderr, cmd, t.Topic, err)
	}
	previewNotes(p, cmd, t.Sub, stderr)
	n := int64(len(p.Letters))
	q := question{cmd: cmd, text: fmt.Sprintf("skip the first %d of the %s of %s on %s?", n, backlogWords(t.Backlog()), shortTopic(t.Topic), termtext.Line(t.Sub))}
	if n > bigAction {
		q.name = localName(t.Topic)
	}
	if split := p.Split(); len(split) > 0 {
		b := split[len(split)-1] // only the last batch can be cut
		whole := n - b.Selected
		fix := fmt.Sprintf("The first %d letters end inside batch %s; --count %d stops before it, --count %d takes it whole.",
			n, b.Entry, whole, whole+b.Letters)
		if code, ok := askAboutBatches(ctx, t, cmd, split, fix, &q, stderr); !ok {
			return code
		}
	}
	if ok, code := in.confirm(q, f.yes, stderr); !ok {
		return code
	}
	started := time.Now()
	opts, err := t.Options(ctx, dlqops.Request{Discard: true, Limit: f.count, Until: &p.Until, Selected: n})
	if err != nil {
		printError(stderr, cmd, err)
		return ExitFailure
	}
	var taken []client.MessageID
	sum, err := dlqops.Run(ctx, t.Client, opts, func(ev dlqops.Event) {
		if ev.Action == dlqops.Discarded {
			taken = append(taken, ev.ID)
		}
	})
	if err == nil && !sum.OK() {
		err = fmt.Errorf("%d of the first %d letters could not be acknowledged", sum.Failed, n)
	}
	res.Skipped = sum.Discarded
	if dropped, unknown, kerr := notKept(ctx, t, taken); kerr == nil && dropped+unknown > 0 {
		res.Skipped -= dropped
		fmt.Fprintf(stderr, "%s: %s\n", cmd, keptWords(dropped, unknown, t.Sub))
		if dropped > 0 && err == nil {
			err = fmt.Errorf("the broker did not keep %s acknowledged", plural(dropped, "letter"))
		}
	}
	return finishPurge(ctx, cf, t, res, fmt.Sprintf("first %d", f.count), started, err, f.json, stdout, stderr)
}

// finishPurge reads the backlog after a purge or skip, reports and records it.
func finishPurge(ctx context.Context, cf *clientFlags, t *dlqops.Target, res purgeResult, selection string, started time.Time,
	err error, asJSON bool, stdout, stderr io.Writer) int {
	cmd := dlqPurge.cmd
	res.BacklogAfter = -1 // unknown until the stats say
	if serr := t.Refresh(ctx); serr == nil {
		after := t.Backlog()
		res.BacklogAfter, res.LettersAfter = after.Entries, lettersOf(after)
		if after.Entries == 0 {
			res.LettersAfter = new(int64)
		}
	} else if err == nil {
		fmt.Fprintf(stderr, "%s: backlog after: %v\n", cmd, serr)
	}
	res.OK, res.Seconds = err == nil, time.Since(started).Seconds()
	if err != nil {
		res.Error = err.Error()
	}
	writePurge(res, asJSON, stdout)
	discarded := res.Skipped
	if res.Action == dlqops.ActionPurge && res.LettersBefore != nil && res.LettersAfter != nil {
		discarded = max(*res.LettersBefore-*res.LettersAfter, 0)
	}
	cf.record(cmd, dlqops.HistoryEntry{When: started, Action: res.Action, DLQ: t.Topic, Subscription: t.Sub,
		Selection: selection, Discarded: discarded, Result: resultOf(ctx, err), Elapsed: time.Since(started)}, stderr)
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
	name := shortTopic(r.DLQ)
	sub := termtext.Line(r.Subscription)
	switch {
	case r.BacklogBefore == 0:
		fmt.Fprintf(stdout, "nothing to purge: %s has no backlog on %s\n", name, sub)
	case !r.OK:
		fmt.Fprintf(stdout, "%s of %s via %s failed; %s before\n", r.Action, name, sub, countBefore(r))
	case r.Action == dlqops.ActionSkip:
		fmt.Fprintf(stdout, "skipped the first %d letters of %s via %s: %s\n", r.Skipped, name, sub, countChange(r))
	default:
		fmt.Fprintf(stdout, "purged %s via %s: %s\n", name, sub, countChange(r))
	}
}

// countBefore is the backlog before, in letters where they are known.
func countBefore(r purgeResult) string {
	if r.LettersBefore != nil {
		return plural(*r.LettersBefore, "letter")
	}
	return "≈ " + plural(r.BacklogBefore, "entry")
}

// countChange is the backlog before and after: "letters 5 → 3", else in entries.
func countChange(r purgeResult) string {
	if r.LettersBefore != nil && r.LettersAfter != nil {
		return fmt.Sprintf("letters %d → %d", *r.LettersBefore, *r.LettersAfter)
	}
	after := strconv.FormatInt(r.BacklogAfter, 10)
	if r.BacklogAfter < 0 {
		after = "unknown"
	}
	return fmt.Sprintf("backlog ≈ %d → %s entries (the broker counts no letters)", r.BacklogBefore, after)
}
