package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/replay"
)

// replayFlags are the flags of "letterbox replay".
type replayFlags struct {
	dlq, subscription, to, ids string
	filters                    filterList
	rate                       float64
	limit                      int64
	maxReplays                 int
	dryRun, json, fresh        bool
}

// replayFlagNames lists the replay flags in the order of the help.
var replayFlagNames = []string{"dlq", "subscription", "to", "filter", "ids", "rate", "limit", "max-replays", "dry-run", "json", "new"}

type filterList []string

func (f *filterList) String() string     { return strings.Join(*f, " ") }
func (f *filterList) Set(v string) error { *f = append(*f, v); return nil }

func (r *replayFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.dlq, "dlq", "", "the dead-letter `TOPIC` to replay (required)")
	fs.StringVar(&r.subscription, "subscription", "", "read the DLQ through subscription `S` (default: its only durable one)")
	fs.StringVar(&r.to, "to", "", "destination `TOPIC` for dead letters whose origin is unknown")
	fs.Var(&r.filters, "filter", "select by `EXPR`, repeatable, ANDed: key=V, property.NAME=V, payload~REGEX, json.PATH=V, published>=TIME, published<TIME")
	fs.StringVar(&r.ids, "ids", "", "select these message `IDS` (ledger:entry,...)")
	fs.Float64Var(&r.rate, "rate", 0, "republish at most `N` messages a second (0: no limit)")
	fs.Int64Var(&r.limit, "limit", 0, "move at most `N` messages (0: no limit)")
	fs.IntVar(&r.maxReplays, "max-replays", replay.DefaultMaxReplays, "skip messages already replayed `N` times (loop guard; negative: none)")
	fs.BoolVar(&r.dryRun, "dry-run", false, "report what would move and where; move nothing")
	fs.BoolVar(&r.json, "json", false, "write one JSON object per message considered, then a summary, to stdout")
	fs.BoolVar(&r.fresh, "new", false, "start a new run instead of resuming an interrupted one")
}

const replayUsageText = `Usage: letterbox replay --dlq TOPIC [flags] [client flags]

Moves dead letters back to the topic they died on (REAL_TOPIC, else the topic the DLQ's name
derives from, else --to), through the DLQ's subscription as its only consumer. A dead letter
is acknowledged only once its republish is receipted; what is not selected stays. Starting
the same replay again after an interruption resumes it (exactly once where the broker
deduplicates). Exit status 0 only when everything selected moved (or, with --dry-run, could).

Flags:
`

func runReplay(ctx context.Context, cf *clientFlags, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("letterbox replay")
	// Client flags are accepted before and after "replay"; the ones given before are the
	// defaults here.
	cf.registerWithCurrent(fs)
	var rf replayFlags
	rf.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, replayUsageText)
			printFlags(stdout, fs, replayFlagNames)
			io.WriteString(stdout, "\nClient flags:\n")
			var c clientFlags
			cfs := newFlagSet("letterbox replay")
			c.register(cfs)
			printFlags(stdout, cfs, clientFlagNames)
			return ExitOK
		}
		return usageError(stderr, "letterbox replay", err)
	}
	cf.noteSet(fs)
	if err := cf.validate(); err != nil {
		return usageError(stderr, "letterbox replay", err)
	}
	if _, code := cf.resolveContext("letterbox replay", stderr); code != ExitOK {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "letterbox replay", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if rf.dlq == "" {
		return usageError(stderr, "letterbox replay", errors.New("--dlq TOPIC is required"))
	}
	opts := replay.Options{DLQ: rf.dlq, Subscription: rf.subscription, To: rf.to, Rate: rf.rate,
		DryRun: rf.dryRun, New: rf.fresh, MaxReplays: rf.maxReplays}
	switch {
	case rf.maxReplays == 0:
		return usageError(stderr, "letterbox replay", errors.New("--max-replays must be at least 1 (negative: no loop guard)"))
	case rf.maxReplays < 0:
		opts.MaxReplays = -1
	}
	for _, expr := range rf.filters {
		f, err := replay.ParseFilter(expr)
		if err != nil {
			return filterError(stderr, "letterbox replay", err)
		}
		opts.Selection.Filters = append(opts.Selection.Filters, f)
	}
	if rf.ids != "" {
		ids, err := replay.ParseIDs(rf.ids)
		if err != nil {
			return usageError(stderr, "letterbox replay", err)
		}
		opts.Selection.IDs = ids
	}
	if rf.limit < 0 || rf.rate < 0 {
		return usageError(stderr, "letterbox replay", errors.New("--limit and --rate must not be negative"))
	}
	opts.Selection.Limit = rf.limit

	fail := func(err error) int {
		fmt.Fprintf(stderr, "letterbox replay: %v\n", err)
		return ExitFailure
	}
	ad, cl, err := cf.connect(stderr)
	if err != nil {
		return fail(err)
	}
	defer cl.Close()
	if err := prepareReplay(ctx, ad, &opts); err != nil {
		var ue usageErr
		if errors.As(err, &ue) {
			return usageError(stderr, "letterbox replay", err)
		}
		return fail(err)
	}

	events := make(chan replay.Event, 256)
	opts.Events = events
	shown := make(chan struct{})
	go func() {
		defer close(shown)
		showEvents(events, &rf, opts.DryRun, stdout, stderr)
	}()
	started := time.Now()
	sum, err := replay.Run(ctx, cl, opts)
	<-shown
	writeSummary(sum, &rf, opts, stdout)
	if !opts.DryRun {
		recordHistory(opts, &rf, cf, sum, err, started, stderr)
	}
	switch {
	case errors.Is(err, replay.ErrBusy):
		return fail(err)
	case err != nil && ctx.Err() != nil:
		fmt.Fprintln(stderr, "letterbox replay: interrupted; run the same command again to resume")
		return ExitFailure
	case err != nil:
		return fail(err)
	case !sum.OK():
		return ExitFailure
	}
	return ExitOK
}

// usageErr marks a preparation error that is the command line's fault.
type usageErr struct{ error }

// prepareReplay fills in what the admin API knows: the subscription (the DLQ's only durable
// one when not given), the backlog for the ETA, the namespace's topics to derive the origin
// from the DLQ's name, and whether the broker deduplicates.
func prepareReplay(ctx context.Context, ad *admin.Client, opts *replay.Options) error {
	tn, err := admin.ParseTopic(opts.DLQ)
	if err != nil {
		return usageErr{fmt.Errorf("--dlq: %w", err)}
	}
	opts.DLQ = tn.String()
	st, err := ad.Stats(ctx, opts.DLQ)
	if err != nil {
		return fmt.Errorf("DLQ %s: %w", opts.DLQ, err)
	}
	var durable []string
	for name, s := range st.Subscriptions {
		if s.IsDurable {
			durable = append(durable, name)
		}
	}
	slices.Sort(durable)
	if opts.Subscription == "" {
		if len(durable) != 1 {
			return usageErr{fmt.Errorf("%s has %d durable subscriptions (%s): choose one with --subscription",
				opts.DLQ, len(durable), strings.Join(durable, ", "))}
		}
		opts.Subscription = durable[0]
	} else if !slices.Contains(durable, opts.Subscription) {
		return usageErr{fmt.Errorf("%s has no durable subscription %q (it has: %s)", opts.DLQ, opts.Subscription, strings.Join(durable, ", "))}
	}
	opts.Total = st.Subscriptions[opts.Subscription].MsgBacklog
	opts.Deduplication = strings.EqualFold(st.DeduplicationStatus, "Enabled")
	ns := tn.Tenant + "/" + tn.Namespace
	for _, partitioned := range []bool{false, true} {
		var ts []string
		if partitioned {
			ts, err = ad.PartitionedTopics(ctx, ns, tn.Persistent)
		} else {
			ts, err = ad.Topics(ctx, ns, tn.Persistent)
		}
		if err != nil {
			return fmt.Errorf("topics of %s: %w", ns, err)
		}
		opts.KnownTopics = append(opts.KnownTopics, ts...)
	}
	return nil
}

// connect makes the admin and binary-protocol clients the client flags describe.
func (c *clientFlags) connect(stderr io.Writer) (*admin.Client, *client.Client, error) {
	ao := admin.Options{URL: c.adminURL, Token: c.token}
	if c.tokenFile != "" {
		b, err := os.ReadFile(c.tokenFile)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", c.origin("token-file", "token_file"), err)
		}
		ao.Token = strings.TrimSpace(string(b))
	}
	if c.tlsCAFile != "" || c.tlsInsecure {
		ao.TLS = &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.tlsInsecure}
	}
	if c.tlsCAFile != "" {
		pem, err := os.ReadFile(c.tlsCAFile)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", c.origin("tls-ca-file", "tls_ca_file"), err)
		}
		ao.TLS.RootCAs = x509.NewCertPool()
		if !ao.TLS.RootCAs.AppendCertsFromPEM(pem) {
			return nil, nil, fmt.Errorf("%s %s: no certificate", c.origin("tls-ca-file", "tls_ca_file"), c.tlsCAFile)
		}
	}
	ad, err := admin.New(ao)
	if err != nil {
		return nil, nil, err
	}
	cl, err := client.New(client.Options{ServiceURL: c.serviceURL, Token: c.token, TokenFile: c.tokenFile,
		TLSTrustCertsFile: c.tlsCAFile, TLSAllowInsecureConnection: c.tlsInsecure,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		return nil, nil, err
	}
	return ad, cl, nil
}

// jsonEvent is one line of --json output.
type jsonEvent struct {
	ID          string `json:"id"`
	Key         string `json:"key,omitempty"`
	Destination string `json:"destination,omitempty"`
	Action      string `json:"action"`
	Reason      string `json:"reason,omitempty"`
}

// showEvents writes each event as JSON (--json), or draws a progress bar on a terminal, until
// events is closed.
func showEvents(events <-chan replay.Event, rf *replayFlags, dryRun bool, stdout, stderr io.Writer) {
	enc := json.NewEncoder(stdout)
	bar := !rf.json && isTerminal(stderr)
	var last time.Time
	var lastEv replay.Event
	drawn := false
	for ev := range events {
		if rf.json {
			enc.Encode(jsonEvent{ID: ev.IDString(), Key: ev.Key, Destination: ev.Destination, Action: string(ev.Action), Reason: ev.Reason})
			continue
		}
		if ev.Action == replay.Failed || (ev.Reason != "" && !strings.HasPrefix(ev.Reason, "not selected")) {
			if drawn {
				io.WriteString(stderr, "\r\033[K")
			}
			fmt.Fprintf(stderr, "%s %s: %s\n", ev.IDString(), ev.Action, ev.Reason)
		}
		lastEv = ev
		if bar && time.Since(last) > 100*time.Millisecond {
			last = time.Now()
			drawBar(stderr, ev.Progress, dryRun)
			drawn = true
		}
	}
	if drawn {
		drawBar(stderr, lastEv.Progress, dryRun)
		io.WriteString(stderr, "\n")
	}
}

func drawBar(w io.Writer, p replay.Progress, dryRun bool) {
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
	fmt.Fprintf(w, "\r\033[K%s%d considered, %s, skipped %d, failed %d, %.0f msg/s%s", bar, p.Considered, moved, p.Skipped, p.Failed, p.Rate, eta)
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
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
	Complete     bool    `json:"complete"`
	OK           bool    `json:"ok"`
	Delivery     string  `json:"delivery"`
	Seconds      float64 `json:"seconds"`
}

func writeSummary(sum replay.Summary, rf *replayFlags, opts replay.Options, stdout io.Writer) {
	delivery := "at least once (deduplication is off: a resumed run may publish some messages twice)"
	if sum.ExactlyOnce {
		delivery = "exactly once (the broker deduplicates)"
	}
	if sum.DryRun {
		delivery = "none (dry run)"
	}
	if rf.json {
		json.NewEncoder(stdout).Encode(jsonSummary{Summary: true, Run: sum.Run, Resumed: sum.Resumed, DryRun: sum.DryRun,
			Subscription: opts.Subscription, Considered: sum.Considered, Moved: sum.Moved, WouldMove: sum.WouldMove,
			Skipped: sum.Skipped, Guarded: sum.Guarded, Failed: sum.Failed, Complete: sum.Complete, OK: sum.OK(),
			Delivery: delivery, Seconds: sum.Elapsed.Seconds()})
		return
	}
	verb := "moved " + strconv.FormatInt(sum.Moved, 10)
	if sum.DryRun {
		verb = "would move " + strconv.FormatInt(sum.WouldMove, 10)
	}
	fmt.Fprintf(stdout, "%s of %d considered from %s (subscription %s); skipped %d (loop guard %d), failed %d, in %s\n",
		verb, sum.Considered, opts.DLQ, opts.Subscription, sum.Skipped, sum.Guarded, sum.Failed, sum.Elapsed.Round(time.Millisecond))
	if !sum.DryRun && sum.Run != "" {
		resumed := ""
		if sum.Resumed {
			resumed = ", resumed"
		}
		fmt.Fprintf(stdout, "run %s%s; delivery %s\n", sum.Run, resumed, delivery)
	}
	if !sum.Complete {
		io.WriteString(stdout, "not complete: run the same command again to continue\n")
	}
}

// recordHistory adds a real run to the replay history the TUI's dead-letter screen lists, so
// whoever is on call next sees what was already put back.
func recordHistory(opts replay.Options, rf *replayFlags, cf *clientFlags, sum replay.Summary, err error, started time.Time, stderr io.Writer) {
	path, perr := replay.DefaultHistoryPath()
	if perr != nil {
		fmt.Fprintf(stderr, "letterbox replay: not recorded in the replay history: %v\n", perr)
		return
	}
	selection := "all"
	var parts []string
	if len(opts.Selection.IDs) > 0 {
		parts = append(parts, fmt.Sprintf("%d listed ids", len(opts.Selection.IDs)))
	}
	parts = append(parts, rf.filters...)
	if opts.Selection.Limit > 0 {
		parts = append(parts, fmt.Sprintf("limit %d", opts.Selection.Limit))
	}
	if len(parts) > 0 {
		selection = strings.Join(parts, ", ")
	}
	e := replay.HistoryEntry{
		When: started, Action: replay.ActionReplay, Cluster: replay.ClusterKey(cf.context, cf.adminURL),
		Context: cf.context, User: replay.Actor(), DLQ: opts.DLQ, Subscription: opts.Subscription, Selection: selection,
		Moved: sum.Moved, Skipped: sum.Skipped, Failed: sum.Failed, Guarded: sum.Guarded,
		Result: replay.Result(sum, err), Elapsed: time.Since(started), Run: sum.Run, By: "cli",
	}
	if herr := replay.AppendHistory(path, e); herr != nil {
		fmt.Fprintf(stderr, "letterbox replay: not recorded in the replay history: %v\n", herr)
	}
}
