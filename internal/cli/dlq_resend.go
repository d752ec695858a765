package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/termtext"
)

// resendFlags are the flags of "letterbox dlq resend".
type resendFlags struct {
	id, subscription, to, payloadFile string
	payload, key                      optString
	properties                        propertyList
	unset                             stringList
	edit, yes, json, notADLQ          bool
}

func (f *resendFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.id, "id", "", "the letter `L:E` to resend (ledger:entry:partition:batch for one letter of a batch)")
	fs.StringVar(&f.subscription, "subscription", "", "acknowledge it on subscription `S` (default: the DLQ's only durable one)")
	fs.StringVar(&f.to, "to", "", "send it to `TOPIC` instead of its origin")
	fs.Var(&f.payload, "payload", "send `TEXT` as the payload")
	fs.StringVar(&f.payloadFile, "payload-file", "", "send the content of `FILE` as the payload")
	fs.Var(&f.key, "key", "send with key `K`")
	fs.Var(&f.properties, "property", "set property `k=v`, repeatable")
	fs.Var(&f.unset, "unset-property", "remove property `k`, repeatable")
	fs.BoolVar(&f.edit, "edit", false, "edit the payload in $VISUAL (else $EDITOR) first")
	fs.BoolVar(&f.notADLQ, "not-a-dlq", false, notADLQHelp)
	fs.BoolVar(&f.yes, "yes", false, "do not ask")
	fs.BoolVar(&f.json, "json", false, "write the outcome as one JSON object to stdout")
}

var dlqResend = dlqSub{cmd: "letterbox dlq resend",
	flags: []string{"id", "subscription", "to", "payload", "payload-file", "key", "property", "unset-property", "edit", "not-a-dlq", "yes", "json"},
	usage: `Usage: letterbox dlq resend DLQ --id L:E [--subscription S] [--to TOPIC]
                            [--payload TEXT | --payload-file FILE] [--key K] [--property k=v]...
                            [--unset-property k]... [--edit] [--yes] [--json] [client flags]

Sends one dead letter again, as fixed by hand, to the topic it died on (REAL_TOPIC, else the
topic the DLQ's name derives from) or to --to. The edit starts from the letter as it is —
payload, key and properties, without the DLQ's bookkeeping properties — and the flags change
it; REPLAYED_FROM and REPLAY_COUNT are added as a replay adds them (the loop guard does not
hold back a letter a person resends). The letter is acknowledged in the DLQ only once the new
message is receipted: interrupted in between, the letter stays (a duplicate at worst). The
command shows what it will send and asks (y) unless --yes; without a terminal and --yes it
does nothing (exit 2).

Flags:
`}

// resendResult is the output of --json.
type resendResult struct {
	ID           string `json:"id"`
	DLQ          string `json:"dlq"`
	Subscription string `json:"subscription"`
	Destination  string `json:"destination"`
	Action       string `json:"action"` // "resent" or "failed"
	Reason       string `json:"reason,omitempty"`
	OK           bool   `json:"ok"`
}

func runDLQResend(ctx context.Context, cf *clientFlags, in stdin, args []string, stdout, stderr io.Writer) int {
	cmd := dlqResend.cmd
	var f resendFlags
	pos, code, ok := dlqResend.parse(cf, args, f.register, stdout, stderr)
	if !ok {
		return code
	}
	if code := oneDLQ(cmd, pos, stderr); code != ExitOK {
		return code
	}
	usage := func(err error) int { return usageError(stderr, cmd, err) }
	id, fileBody, editor, err := f.check(in)
	if err != nil {
		return usage(err)
	}
	if code := cf.refuseReadOnly(cmd, "resend a dead letter", stderr); code != ExitOK {
		return code
	}
	t, code := openTarget(ctx, cf, cmd, pos[0], f.subscription, f.notADLQ, stderr)
	if code != ExitOK {
		return code
	}
	defer t.Client.Close()
	fail := func(err error) int {
		printError(stderr, cmd, err)
		return ExitFailure
	}

	m, err := t.Letter(ctx, id)
	if err != nil {
		switch {
		case isUsage(err):
			return usage(err)
		case errors.Is(err, dlqops.ErrNoLetter):
			cf.record(cmd, dlqops.HistoryEntry{When: time.Now(), Action: dlqops.ActionResend, DLQ: t.Topic, Subscription: t.Sub,
				Selection: "id " + positionOf(id), Result: dlqops.ResultNothingSelected}, stderr)
			return nothingSelected(stderr, cmd, termtext.Line(err.Error()))
		}
		return fail(err)
	}
	known, err := dlqops.TopicsBeside(ctx, t.Admin, t.Topic)
	if err != nil {
		return fail(err)
	}
	dest, err := dlqops.Destination(m, t.Topic, f.to, known)
	if err != nil {
		return usage(err)
	}
	ed := startEdit(m)
	f.applyTo(&ed, fileBody)
	if f.edit {
		if ed.Payload, err = editPayload(ctx, editor, ed.Payload, in, stderr); err != nil {
			return fail(err)
		}
	}
	edited := edits(m, ed)
	showResend(stderr, m, ed, t, dest)
	q := question{cmd: cmd, text: "resend this letter?"}
	if m.ID.BatchSize > 1 {
		// The letter leaves the DLQ by an acknowledgement of one letter of its batch.
		split := []dlqops.BatchShare{{Entry: dlqops.LedgerEntry{Ledger: m.ID.Ledger, Entry: m.ID.Entry}, Letters: int64(m.ID.BatchSize), Selected: 1}}
		if code, ok := askAboutBatches(ctx, t, cmd, split, "The letter would be resent and stay in the DLQ too.", &q, stderr); !ok {
			return code
		}
	}
	if ok, code := in.confirm(q, f.yes, stderr); !ok {
		return code
	}

	started := time.Now()
	// The destination, another tenant's or not, is the one the preview named before it asked.
	opts, err := t.Options(ctx, dlqops.Resend(f.id, dest, &ed))
	if err != nil {
		return fail(err)
	}
	res, sum, err := sendLetter(ctx, t, opts, m, dest, stderr)
	writeResend(res, f.json, stdout, stderr)
	selection := "id " + res.ID
	if edited {
		selection += " edited"
	}
	result := dlqops.Result(sum, err)
	if err == nil && !res.OK {
		result = "error: " + res.Reason
	}
	e := dlqops.ResendEntry(t.Topic, t.Sub, selection, sum, result)
	e.When, e.Elapsed = started, time.Since(started)
	cf.record(cmd, e, stderr)
	if !res.OK {
		return ExitFailure
	}
	return ExitOK
}

// check reads the flags that say which letter and how it changes, before anything connects:
// the letter's id, the payload file's content, and the editor --edit opens. An error is the
// command line's mistake.
func (f *resendFlags) check(in stdin) (id client.MessageID, fileBody []byte, editor string, err error) {
	if f.id == "" {
		return id, nil, "", errors.New("which letter? give its id with --id L:E (letterbox dlq export lists them)")
	}
	if id, err = client.ParseMessageID(f.id); err != nil {
		return id, nil, "", fmt.Errorf("--id: %w", err)
	}
	if f.payload.set && f.payloadFile != "" {
		return id, nil, "", errors.New("--payload and --payload-file exclude each other")
	}
	if err := f.properties.check(f.unset); err != nil {
		return id, nil, "", err
	}
	editor = editorCommand()
	if f.edit && (editor == "" || !in.terminal) {
		return id, nil, "", errors.New("--edit needs $VISUAL or $EDITOR set, and a terminal on stdin")
	}
	if f.payloadFile != "" {
		if fileBody, err = os.ReadFile(f.payloadFile); err != nil {
			return id, nil, "", fmt.Errorf("--payload-file: %w", err)
		}
	}
	return id, fileBody, editor, nil
}

// applyTo changes ed as the flags say (not --edit, which comes after): the payload, from
// --payload or the file read, the key, and the properties set and removed.
func (f *resendFlags) applyTo(ed *dlqops.Edit, fileBody []byte) {
	switch {
	case f.payload.set:
		ed.Payload = []byte(f.payload.v)
	case f.payloadFile != "":
		ed.Payload = fileBody
	}
	if f.key.set {
		ed.Key = f.key.v
	}
	f.properties.apply(ed.Properties, f.unset)
}

// sendLetter resends the letter m to dest with the engine (opts select it alone), then reads
// the subscription's cursor back: a letter the broker did not keep acknowledged comes back,
// and is reported so. res says what happened, and why not when it did not.
func sendLetter(ctx context.Context, t *dlqops.Target, opts dlqops.ReplayOptions, m *client.Message, dest string, stderr io.Writer) (resendResult, dlqops.Summary, error) {
	cmd := dlqResend.cmd
	res := resendResult{ID: positionOf(m.ID), DLQ: t.Topic, Subscription: t.Sub, Destination: dest, Action: "failed"}
	sum, err := dlqops.Run(ctx, t.Client, opts, func(ev dlqops.Event) {
		switch ev.Action {
		case dlqops.Moved:
			res.Action, res.OK = "resent", true
		case dlqops.Failed:
			res.Reason = ev.Reason
		}
	})
	if res.OK {
		// Resent; acknowledged as the broker keeps it? A letter it does not keep comes back.
		if dropped, unknown, kerr := notKept(ctx, t, []client.MessageID{m.ID}); kerr == nil && dropped+unknown > 0 {
			fmt.Fprintf(stderr, "%s: %s\n", cmd, keptWords(dropped, unknown, t.Sub))
			if dropped > 0 {
				res.OK, res.Reason = false, "resent, but the broker did not keep its acknowledgement: it is still in the DLQ"
			}
		}
	}
	switch {
	case err != nil && ctx.Err() != nil:
		res.Reason = "interrupted: the letter stays in the DLQ unless its resend was receipted"
	case err != nil:
		res.Reason = err.Error()
	case !res.OK && res.Reason == "":
		res.Reason = "not found on " + t.Sub + ": acknowledged meanwhile?"
	}
	return res, sum, err
}

// writeResend says what the resend did: the --json object, or a line on stdout when it was
// resent, on stderr when not.
func writeResend(res resendResult, asJSON bool, stdout, stderr io.Writer) {
	switch {
	case asJSON:
		json.NewEncoder(stdout).Encode(res)
	case res.OK:
		fmt.Fprintf(stdout, "resent %s to %s; acknowledged in %s via %s\n", res.ID, termtext.Line(res.Destination), shortTopic(res.DLQ),
			termtext.Line(res.Subscription))
	default:
		fmt.Fprintf(stderr, "%s: %s not resent: %s\n", dlqResend.cmd, res.ID, termtext.Line(res.Reason))
	}
}

// stringList is a repeatable flag of plain strings (--unset-property).
type stringList []string

func (l *stringList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }
