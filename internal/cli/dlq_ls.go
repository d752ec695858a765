package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/termtext"
)

// lsFlags are the flags of "letterbox dlq ls".
type lsFlags struct {
	json, retry bool
}

func (f *lsFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.json, "json", false, "write one JSON object per topic to stdout")
	fs.BoolVar(&f.retry, "retry", false, "list retry topics too")
}

var dlqLs = dlqSub{cmd: "letterbox dlq ls", flags: []string{"json", "retry"}, usage: `Usage: letterbox dlq ls [NAMESPACE] [flags] [client flags]

Lists the dead-letter topics of NAMESPACE (tenant/ns), or of every namespace of the cluster,
sorted by name: the subscription whose letters it counts (its only durable one, normally the
initial one its dead-letter router made; among several, the one with the largest backlog), the
letters that subscription has not acknowledged (each message of a batch one; "≈ N entries"
where the broker counts no letters: a real cluster counts entries, and a batch is one), rate
in, the topic and the subscription its letters died on, its subscriptions, and what the
verdict rests on (the topic's purpose property, its name, or its newest message;
docs/dead-letters.md). A partitioned topic is one line. With --json, one object per DLQ:
topic, kind, partitions, subscription, letters (null where the broker counts none),
backlog_entries (that subscription's backlog in entries), backlog (entries, summed over the
subscriptions), rate_in, origin, origin_subscription, subscriptions, basis.

Flags:
`}

// lsRow is one letter topic of the listing, and one line of --json.
type lsRow struct {
	Topic      string `json:"topic"`
	Kind       string `json:"kind"` // "dead letter" or "retry"
	Partitions int    `json:"partitions"`
	// Subscription is the one whose letters are counted ("" without one): the DLQ's main
	// subscription (dlqops.MainSubscription).
	Subscription string `json:"subscription"`
	// Letters are the letters Subscription has not acknowledged, each message of a batch one;
	// null where the broker does not count them (BacklogEntries is then all there is).
	Letters        *int64 `json:"letters"`
	BacklogEntries int64  `json:"backlog_entries"`
	// Backlog is the entries of every subscription's backlog, summed, as the field always was.
	Backlog            int64    `json:"backlog"`
	RateIn             float64  `json:"rate_in"` // messages a second
	Origin             string   `json:"origin"`
	OriginSubscription string   `json:"origin_subscription"`
	Subscriptions      []string `json:"subscriptions"`
	Basis              string   `json:"basis"`
}

func runDLQLs(ctx context.Context, cf *clientFlags, _ stdin, args []string, stdout, stderr io.Writer) int {
	var f lsFlags
	pos, code, ok := dlqLs.parse(cf, args, f.register, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) > 1 {
		return usageError(stderr, dlqLs.cmd, fmt.Errorf("unexpected argument %q", pos[1]))
	}
	var namespaces []string
	if len(pos) == 1 {
		ns := pos[0]
		if t, n, ok := strings.Cut(ns, "/"); !ok || t == "" || n == "" || strings.Contains(n, "/") {
			return usageError(stderr, dlqLs.cmd, fmt.Errorf("namespace %q: want tenant/namespace", ns))
		}
		namespaces = []string{ns}
	}
	ad, cl, err := cf.connect(ctx, stderr)
	if err != nil {
		printError(stderr, dlqLs.cmd, err)
		return ExitFailure
	}
	cl.Close() // ls reads through the admin API only
	// Across the cluster, a tenant or namespace the token may not read does not hide the
	// others' DLQs; the exit status still says the listing is incomplete.
	whole := namespaces == nil
	code = ExitOK
	problem := func(err error) {
		printError(stderr, dlqLs.cmd, err)
		code = ExitFailure
	}
	if whole {
		if namespaces, err = dlqops.Namespaces(ctx, ad, problem); err != nil {
			problem(err)
			return code
		}
	}

	finder := dlqops.NewFinder(ad)
	var rows []lsRow
	for _, ns := range namespaces {
		found, err := letterTopics(ctx, ad, finder, ns, f.retry)
		if err != nil {
			if admin.IsNotFound(err) {
				err = fmt.Errorf("namespace %s: %w", ns, dlqops.ErrNotFound)
			}
			problem(err)
			if !whole || ctx.Err() != nil {
				return code
			}
			continue
		}
		rows = append(rows, found...)
	}
	slices.SortFunc(rows, func(a, b lsRow) int { return strings.Compare(a.Topic, b.Topic) })
	if f.json {
		enc := json.NewEncoder(stdout)
		for _, r := range rows {
			enc.Encode(r)
		}
		return code
	}
	if len(rows) == 0 {
		where := "the cluster"
		if !whole {
			where = namespaces[0]
		}
		what := "dead-letter topic"
		if f.retry {
			what = "dead-letter or retry topic"
		}
		fmt.Fprintf(stderr, "%s: no %s in %s\n", dlqLs.cmd, what, where)
		return code
	}
	writeLsTable(stdout, rows, f.retry)
	return code
}

// letterTopics finds the DLQs (and with retry, the retry topics) of the persistent topics of
// ns: a non-persistent topic keeps no letter for anyone to triage.
func letterTopics(ctx context.Context, ad *admin.Client, finder *dlqops.Finder, ns string, retry bool) ([]lsRow, error) {
	plain, err := ad.Topics(ctx, ns, true)
	if err != nil {
		return nil, fmt.Errorf("topics of %s: %w", ns, err)
	}
	partitioned, err := ad.PartitionedTopics(ctx, ns, true)
	if err != nil {
		return nil, fmt.Errorf("partitioned topics of %s: %w", ns, err)
	}
	// A fresh Finder has nothing cached, so every topic is looked at whatever its message
	// counter: the counters would cost a stats request per topic and change nothing (-1).
	var topics []dlqops.Topic
	isPartitioned := map[string]bool{}
	for _, name := range partitioned {
		n, err := ad.Partitions(ctx, name)
		if err != nil {
			if admin.IsNotFound(err) {
				continue // deleted since the listing
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		isPartitioned[name] = true
		topics = append(topics, dlqops.Topic{Name: name, Partitions: n, InCounter: -1})
	}
	for _, name := range plain {
		if base := naming.BaseName(name); base != name && isPartitioned[base] {
			continue // a partition: its partitioned topic stands for it
		}
		topics = append(topics, dlqops.Topic{Name: name, InCounter: -1})
	}
	// The command answers once: every topic gets its verdict in this call, not over the
	// several calls the TUI spreads its samples across.
	finder.MaxSamples = max(len(topics), 1)
	verdicts := finder.Classify(ctx, topics)
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	var rows []lsRow
	for _, t := range topics {
		v := verdicts[t.Name]
		if v.Kind != deadletter.DeadLetter && (v.Kind != deadletter.Retry || !retry) {
			continue
		}
		st, err := topicStats(ctx, ad, t)
		if admin.IsNotFound(err) {
			continue // deleted since the listing
		}
		if err != nil {
			return nil, fmt.Errorf("stats of %s: %w", t.Name, err)
		}
		r := lsRow{Topic: t.Name, Kind: v.Kind.String(), Partitions: t.Partitions, RateIn: st.MsgRateIn,
			Origin: v.Origin, OriginSubscription: v.Subscription, Basis: v.By.String(),
			Subscriptions: dlqops.Subscriptions(st, false), Subscription: dlqops.MainSubscription(st)}
		for _, name := range r.Subscriptions {
			r.Backlog += st.Subscriptions[name].MsgBacklog
		}
		if r.Subscription != "" {
			b := dlqops.BacklogOf(st, r.Subscription)
			r.BacklogEntries = b.Entries
			if b.LettersKnown {
				r.Letters = &b.Letters
			}
		}
		if r.Subscriptions == nil {
			r.Subscriptions = []string{} // [] in JSON, as for a topic with subscriptions
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// topicStats are a topic's stats, a partitioned topic's summed over its partitions.
func topicStats(ctx context.Context, ad *admin.Client, t dlqops.Topic) (adminapi.TopicStats, error) {
	if t.Partitions > 0 {
		st, err := ad.PartitionedStats(ctx, t.Name, false)
		return st.TopicStats, err
	}
	return ad.Stats(ctx, t.Name)
}

// writeLsTable writes the listing as an aligned table; kind adds the KIND column (with
// --retry, where a line may be either).
func writeLsTable(w io.Writer, rows []lsRow, kind bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "NAME\tLETTERS\tOF\tRATE IN\tORIGIN\tORIGIN SUB\tSUBSCRIPTIONS\tBY"
	if kind {
		head = "NAME\tKIND\tLETTERS\tOF\tRATE IN\tORIGIN\tORIGIN SUB\tSUBSCRIPTIONS\tBY"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		name := shortTopic(r.Topic)
		if r.Partitions > 0 {
			name += " (" + strconv.Itoa(r.Partitions) + " partitions)"
		}
		cells := []string{name}
		if kind {
			cells = append(cells, r.Kind)
		}
		cells = append(cells, lettersCell(r.Letters, r.BacklogEntries, r.Subscription), orDash(termtext.Line(r.Subscription)),
			strconv.FormatFloat(r.RateIn, 'f', 1, 64),
			orDash(shortTopic(r.Origin)), orDash(termtext.Line(r.OriginSubscription)), orDash(termtext.Line(strings.Join(r.Subscriptions, ","))), r.Basis)
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
