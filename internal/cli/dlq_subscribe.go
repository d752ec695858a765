package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/termtext"
)

// subscribeFlags are the flags of "letterbox dlq subscribe".
type subscribeFlags struct {
	subscription       string
	minutes, sizeMB    optInt
	yes, json, notADLQ bool
}

func (f *subscribeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.subscription, "subscription", "", "the subscription's `NAME` (default: <origin subscription>-replay, else dlq-replay)")
	fs.Var(&f.minutes, "retention-minutes", "keep the namespace's acknowledged messages `N` minutes (-1: no limit)")
	fs.Var(&f.sizeMB, "retention-size-mb", "keep up to `N` MB of them per topic (-1: no limit)")
	fs.BoolVar(&f.notADLQ, "not-a-dlq", false, notADLQHelp)
	fs.BoolVar(&f.yes, "yes", false, "do not ask")
	fs.BoolVar(&f.json, "json", false, "write the outcome as one JSON object to stdout")
}

var dlqSubscribe = dlqSub{cmd: "letterbox dlq subscribe", flags: []string{"subscription", "retention-minutes", "retention-size-mb", "not-a-dlq", "yes", "json"},
	usage: `Usage: letterbox dlq subscribe DLQ [--subscription NAME] [--retention-minutes N] [--retention-size-mb N]
                               [--yes] [--json] [client flags]

Repairs a DLQ that loses letters: a topic keeps a message only while a subscription has not
acknowledged it, or while retention says so (docs/dead-letters.md, "The initial subscription").
Creates a durable subscription at the DLQ's earliest retained letter, named NAME, by default
after the subscription the letters died on (billing-replay), else dlq-replay; and, with a
retention flag, sets the retention of the DLQ's namespace, which every topic of it gets (-1: no
limit; a limit not given keeps the namespace's, else has none). Retention flags alone, on a DLQ
that has a durable subscription already, set only the retention. Asks (y) unless --yes. A
subscription of that name that exists already is an error (exit 1).

Flags:
`}

// optInt is an integer flag that knows whether it was given.
type optInt struct {
	v   int64
	set bool
}

func (o *optInt) String() string {
	if !o.set {
		return ""
	}
	return strconv.FormatInt(o.v, 10)
}

func (o *optInt) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < -1 {
		return errors.New("want a number, or -1 for no limit")
	}
	o.v, o.set = n, true
	return nil
}

// subscribeResult is the output of --json.
type subscribeResult struct {
	DLQ          string `json:"dlq"`
	Subscription string `json:"subscription,omitempty"` // the one to create
	Created      bool   `json:"created"`
	Backlog      int64  `json:"backlog"` // the new subscription's, in entries
	// Letters is the new subscription's backlog in letters; null where the broker does not
	// count them.
	Letters      *int64                      `json:"letters"`
	Namespace    string                      `json:"namespace,omitempty"`
	Retention    *adminapi.RetentionPolicies `json:"retention,omitempty"` // the one to set
	RetentionSet bool                        `json:"retention_set"`
	OK           bool                        `json:"ok"`
	Error        string                      `json:"error,omitempty"`
}

func runDLQSubscribe(ctx context.Context, cf *clientFlags, in stdin, args []string, stdout, stderr io.Writer) int {
	cmd := dlqSubscribe.cmd
	var f subscribeFlags
	pos, code, ok := dlqSubscribe.parse(cf, args, f.register, stdout, stderr)
	if !ok {
		return code
	}
	if code := oneDLQ(cmd, pos, stderr); code != ExitOK {
		return code
	}
	if code := cf.refuseReadOnly(cmd, "create a subscription or set retention", stderr); code != ExitOK {
		return code
	}
	ad, cl, topic, code := openDLQ(ctx, cf, cmd, pos[0], stderr)
	if code != ExitOK {
		return code
	}
	cl.Close() // the admin API does it all
	fail := func(err error) int {
		printError(stderr, cmd, err)
		return ExitFailure
	}
	if !f.notADLQ {
		if err := dlqops.RequireLetterTopic(ctx, ad, topic); err != nil {
			if err = flagWords(cmd, err); isUsage(err) {
				return usageError(stderr, cmd, err)
			}
			return fail(err)
		}
	}
	tn, err := naming.ParseTopic(topic)
	if err != nil {
		return fail(err)
	}
	ns := tn.NamespaceName()
	parts, err := ad.Partitions(ctx, topic)
	if err != nil && !admin.IsNotFound(err) {
		return fail(err)
	}
	dt := dlqops.Topic{Name: topic, Partitions: parts, InCounter: -1}
	st, err := topicStats(ctx, ad, dt)
	if err != nil {
		return fail(fmt.Errorf("DLQ %s: %w", topic, err))
	}
	durable := dlqops.Subscriptions(st, true)

	res := subscribeResult{DLQ: topic, OK: true}
	retention := f.minutes.set || f.sizeMB.set
	var asks []string
	if f.subscription != "" || !retention || len(durable) == 0 {
		res.Subscription = f.subscription
		if res.Subscription == "" {
			known, err := dlqops.TopicsBeside(ctx, ad, topic)
			if err != nil {
				return fail(err)
			}
			res.Subscription = dlqops.SuggestSubscription(ctx, ad, dt, known)
		}
		if _, ok := st.Subscriptions[res.Subscription]; ok {
			return fail(fmt.Errorf("%s has a subscription %s already (%s): nothing done; name another with --subscription",
				shortTopic(topic), res.Subscription, backlogWords(dlqops.BacklogOf(st, res.Subscription))))
		}
		ask := fmt.Sprintf("create the durable subscription %s on %s at its earliest retained letter", termtext.Line(res.Subscription), shortTopic(topic))
		if len(durable) > 0 {
			ask += fmt.Sprintf(" (it has %s already)", strings.Join(durable, ", "))
		}
		asks = append(asks, ask)
	}
	var was *adminapi.RetentionPolicies
	if retention {
		res.Namespace = ns
		if was, err = ad.Retention(ctx, ns); err != nil {
			return fail(fmt.Errorf("retention of %s: %w", ns, err))
		}
		res.Retention = newRetention(was, f.minutes, f.sizeMB)
		asks = append(asks, fmt.Sprintf("set the retention of %s, every topic of it, to %s (now %s)", ns,
			retentionWords(res.Retention), retentionWords(was)))
	}
	if ok, code := in.confirm(question{cmd: cmd, text: strings.Join(asks, ", and ") + "?"}, f.yes, stderr); !ok {
		return code
	}

	var errs []error
	if res.Subscription != "" {
		errs = append(errs, createSubscription(ctx, cf, ad, dt, &res, stderr))
	}
	if retention && ctx.Err() == nil {
		started := time.Now()
		err := ad.SetRetention(ctx, ns, *res.Retention)
		if err != nil {
			err = fmt.Errorf("set the retention of %s: %w", ns, err)
		}
		errs = append(errs, err)
		res.RetentionSet = err == nil
		cf.record(cmd, dlqops.HistoryEntry{When: started, Action: dlqops.ActionRetention, DLQ: topic,
			Selection: retentionWords(res.Retention) + " on " + ns, Result: resultOf(ctx, err), Elapsed: time.Since(started)}, stderr)
	}
	if err := errors.Join(errs...); err != nil {
		res.OK, res.Error = false, err.Error()
	}
	writeSubscribe(res, f.json, stdout)
	if !res.OK {
		return fail(errors.Join(errs...))
	}
	return ExitOK
}

// createSubscription creates res.Subscription on the DLQ dt at its earliest retained letter,
// records it, and reads its backlog back into res.
func createSubscription(ctx context.Context, cf *clientFlags, ad *admin.Client, dt dlqops.Topic, res *subscribeResult, stderr io.Writer) error {
	cmd, topic := dlqSubscribe.cmd, dt.Name
	started := time.Now()
	err := dlqops.Subscribe(ctx, ad, topic, res.Subscription)
	if admin.StatusOf(err) == http.StatusConflict {
		err = fmt.Errorf("%s has a subscription %s already: nothing created", shortTopic(topic), res.Subscription)
	} else if err != nil {
		err = fmt.Errorf("create subscription %s on %s: %w", res.Subscription, topic, err)
	}
	res.Created = err == nil
	cf.record(cmd, dlqops.HistoryEntry{When: started, Action: dlqops.ActionSubscribe, DLQ: topic, Subscription: res.Subscription,
		Selection: "earliest", Result: resultOf(ctx, err), Elapsed: time.Since(started)}, stderr)
	if err == nil {
		if st, err := topicStats(ctx, ad, dt); err == nil {
			b := dlqops.BacklogOf(st, res.Subscription)
			res.Backlog, res.Letters = b.Entries, lettersOf(b)
		}
	}
	return err
}

// newRetention is the retention to set: the limits given, and for one not given the
// namespace's current one, else no limit (-1), as upstream spells it.
func newRetention(was *adminapi.RetentionPolicies, minutes, sizeMB optInt) *adminapi.RetentionPolicies {
	r := &adminapi.RetentionPolicies{RetentionTimeInMinutes: -1, RetentionSizeInMB: -1}
	if was != nil && was.RetentionTimeInMinutes != 0 {
		r.RetentionTimeInMinutes = was.RetentionTimeInMinutes
	}
	if was != nil && was.RetentionSizeInMB != 0 {
		r.RetentionSizeInMB = was.RetentionSizeInMB
	}
	if minutes.set {
		r.RetentionTimeInMinutes = int(minutes.v)
	}
	if sizeMB.set {
		r.RetentionSizeInMB = sizeMB.v
	}
	return r
}

// retentionWords says a retention policy: "60 minutes, 100 MB", "no time limit, 100 MB", "none".
func retentionWords(r *adminapi.RetentionPolicies) string {
	if r == nil || (r.RetentionTimeInMinutes == 0 && r.RetentionSizeInMB == 0) {
		return "none"
	}
	limit := func(n int64, unit, none string) string {
		if n < 0 {
			return none
		}
		return strconv.FormatInt(n, 10) + " " + unit
	}
	return limit(int64(r.RetentionTimeInMinutes), "minutes", "no time limit") + ", " + limit(r.RetentionSizeInMB, "MB", "no size limit")
}

func writeSubscribe(r subscribeResult, asJSON bool, stdout io.Writer) {
	if asJSON {
		json.NewEncoder(stdout).Encode(r)
		return
	}
	if r.Created {
		fmt.Fprintf(stdout, "created subscription %s on %s at its earliest retained letter: %s\n", termtext.Line(r.Subscription), shortTopic(r.DLQ),
			backlogWords(dlqops.Backlog{Entries: r.Backlog, Letters: deref(r.Letters), LettersKnown: r.Letters != nil}))
	}
	if r.RetentionSet {
		fmt.Fprintf(stdout, "set the retention of %s: %s\n", r.Namespace, retentionWords(r.Retention))
	}
}

func deref(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}
