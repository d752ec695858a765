package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/replay"
	"github.com/letterbox-dev/letterbox/client/termtext"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// replayFlags are the flags of "letterbox replay".
type replayFlags struct {
	dlq, subscription, to    string
	destination, until       string
	filters                  filterList
	ids                      idList
	rate                     float64
	limit                    int64
	maxReplays               int
	dryRun, json, fresh, yes bool
	notADLQ, crossTenant     bool
}

// replayFlagNames lists the replay flags in the order of the help.
var replayFlagNames = []string{"dlq", "subscription", "to", "destination", "filter", "ids", "until", "rate", "limit", "max-replays", "not-a-dlq", "allow-cross-tenant", "dry-run", "yes", "json", "new"}

func (r *replayFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.dlq, "dlq", "", "the dead-letter `TOPIC` to replay (required)")
	fs.StringVar(&r.subscription, "subscription", "", "read the DLQ through subscription `S` (default: its only durable one)")
	fs.StringVar(&r.to, "to", "", "destination `TOPIC` for dead letters whose origin is unknown")
	fs.StringVar(&r.destination, "destination", "", "send every selected dead letter to `TOPIC`, whatever its origin")
	fs.Var(&r.filters, "filter", filterHelp)
	fs.Var(&r.ids, "ids", "select these message `IDS` (ledger:entry,...)")
	fs.StringVar(&r.until, "until", "", "take dead letters up to message `ID` (ledger:entry) only, as a dry run showed them; later ones stay (default: the DLQ's last message at the start)")
	fs.Float64Var(&r.rate, "rate", 0, "republish at most `N` messages a second (0: no limit)")
	fs.Int64Var(&r.limit, "limit", 0, "move at most `N` messages (0: no limit)")
	fs.IntVar(&r.maxReplays, "max-replays", replay.DefaultMaxReplays, "skip messages already replayed `N` times (loop guard; negative: none)")
	fs.BoolVar(&r.dryRun, "dry-run", false, "report what would move and where; move nothing")
	fs.BoolVar(&r.notADLQ, "not-a-dlq", false, notADLQHelp)
	fs.BoolVar(&r.crossTenant, "allow-cross-tenant", false, "let letters go to topics of another tenant than the DLQ's (without it they stay, reported as failed)")
	fs.BoolVar(&r.yes, "yes", false, "do not ask before replaying every letter of a DLQ of more than 100 (asked on a terminal only)")
	fs.BoolVar(&r.json, "json", false, "write one JSON object per message considered, then a summary, to stdout")
	fs.BoolVar(&r.fresh, "new", false, "start a new run instead of resuming an interrupted one")
}

const replayUsageText = `Usage: letterbox replay --dlq TOPIC [flags] [client flags]

Moves dead letters back to the topic they died on (REAL_TOPIC, else the topic the DLQ's name
derives from, else --to), or every one to --destination, through the DLQ's subscription as
its only consumer. A dead letter is acknowledged only once its republish is receipted; what is
not selected stays. --until ID stops at the DLQ's last message when a dry run was made (its
summary prints the id): what died since stays, counted as arrived. Starting the same replay
again after an interruption resumes it, on the same cluster, and says so first, as --dry-run
says which run it would resume (exactly once where the broker deduplicates). The summary lists the destinations with their counts (what
would move where, with --dry-run). A letter bound for a topic of another tenant than the DLQ's
stays, counted as failed, unless --allow-cross-tenant: its REAL_TOPIC is a stranger's word and
the replay publishes with your credentials; --to or --destination in another tenant is refused
(exit 2) without it. Exit status 0 only when everything selected moved (or, with --dry-run,
could). A read-only session
(--readonly, or a context with readonly = true) runs only --dry-run.

Without --filter, --ids or --limit a replay takes every letter; on a terminal it asks first
when that is more than 100 letters (the DLQ's name typed; --yes does not ask), and without a
terminal it runs. A blank --filter, an empty --ids or an empty item in one is refused (exit 2):
a selection is never wider than written.

--dlq names the DLQ as the dlq commands do (a short name in any namespace, an ambiguous one
refused), and must be a dead-letter or retry topic by the DLQ rule, unless --not-a-dlq. A
filter naming a property no letter carries is warned about, naming those letters carry.

Flags:
`

func runReplay(ctx context.Context, cf *clientFlags, in stdin, args []string, stdout, stderr io.Writer) int {
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
			writeFilterHelp(stdout)
			io.WriteString(stdout, "\n"+exitStatusHelp)
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
	if rf.to != "" && rf.destination != "" {
		return usageError(stderr, "letterbox replay", errors.New("--to and --destination exclude each other (--destination takes every letter)"))
	}
	opts := replay.Options{DLQ: rf.dlq, Subscription: rf.subscription, To: rf.to, Destination: rf.destination,
		Rate: rf.rate, DryRun: rf.dryRun, New: rf.fresh, MaxReplays: rf.maxReplays, AllowCrossTenant: rf.crossTenant,
		Cluster: replay.ClusterKey(cf.context, cf.adminURL)}
	if rf.until != "" {
		id, err := client.ParseMessageID(rf.until)
		if err != nil {
			return usageError(stderr, "letterbox replay", fmt.Errorf("--until: %w", err))
		}
		opts.Until = &id
	}
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
	opts.Selection.IDs = rf.ids.ids
	if rf.limit < 0 || rf.rate < 0 {
		return usageError(stderr, "letterbox replay", errors.New("--limit and --rate must not be negative"))
	}
	opts.Selection.Limit = rf.limit
	if !opts.DryRun {
		if code := cf.refuseReadOnly("letterbox replay", "replay dead letters (--dry-run only shows what would move)", stderr); code != ExitOK {
			return code
		}
	}

	fail := func(err error) int {
		printError(stderr, "letterbox replay", err)
		return ExitFailure
	}
	ad, cl, err := cf.connect(ctx, stderr)
	if err != nil {
		return fail(err)
	}
	defer cl.Close()
	if opts.DLQ, err = findTopic(ctx, ad, opts.DLQ); err == nil {
		err = requireLetterTopic(ctx, ad, "letterbox replay", opts.DLQ, rf.notADLQ)
	}
	if err == nil {
		err = prepareReplay(ctx, ad, &opts)
	}
	if err != nil {
		var ue usageErr
		if errors.As(err, &ue) {
			return usageError(stderr, "letterbox replay", err)
		}
		return fail(err)
	}
	if err := refuseCrossTenant(opts); err != nil {
		return usageError(stderr, "letterbox replay", err)
	}
	if ok, code := confirmEveryLetter(in, opts, rf.yes, stderr); !ok {
		return code
	}
	if !opts.DryRun && triage.ReadBatchAcks(ctx, ad) == triage.BatchAcksLost {
		// Letters moved out of a batch the broker cannot acknowledge in part would be moved
		// and come back: refused before anything is sent.
		var pe *replay.PartOfBatchError
		if err := replay.CheckWholeBatches(ctx, cl, opts); errors.As(err, &pe) {
			fmt.Fprintf(stderr, "letterbox replay: %v\n", err)
			return ExitUsage
		} else if err != nil {
			return fail(err)
		}
	}
	sayResuming(opts, time.Now(), stderr)
	if opts.DryRun && opts.Until == nil {
		// The dry run stops at the DLQ's last message now and says which it is, so that the
		// real run can be told to move exactly what was shown (--until).
		if last, err := ad.LastMessageID(ctx, opts.DLQ); err == nil && last.EntryID >= 0 {
			opts.Until = &client.MessageID{Ledger: last.LedgerID, Entry: last.EntryID, Partition: -1, BatchIndex: -1}
		}
	}

	opts.Names = propertyNames(opts.Selection.Filters)
	events := make(chan replay.Event, 256)
	opts.Events = events
	shown := make(chan struct{})
	var dests destinations
	go func() {
		defer close(shown)
		dests = showEvents(events, &rf, opts.DryRun, stdout, stderr)
	}()
	started := time.Now()
	sum, err := replay.Run(ctx, cl, opts)
	<-shown
	writeSummary(sum, &rf, opts, dests, stdout)
	warnUnseen(stderr, "letterbox replay", opts.Names)
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
	case sum.NothingSelected():
		return nothingSelected(stderr, "letterbox replay", fmt.Sprintf("no letter of %s on %s is selected (%s)",
			termtext.Line(shortTopic(opts.DLQ)), termtext.Line(opts.Subscription), termtext.Line(replaySelection(opts, &rf))))
	}
	return ExitOK
}

// usageErr marks a preparation error that is the command line's fault.
type usageErr struct{ error }

// prepareReplay fills in what the admin API knows: the subscription (the DLQ's only durable
// one when not given), the backlog in letters for the ETA, the namespace's topics to derive the
// origin from the DLQ's name, whether the broker deduplicates, and the admin client that counts
// the letters a run leaves.
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
	if opts.Subscription, err = chooseSubscription(st, opts.DLQ, opts.Subscription); err != nil {
		return err
	}
	opts.Admin = ad
	opts.Total = triage.BacklogOf(st, opts.Subscription).Entries
	if b := triage.BacklogOf(st, opts.Subscription); b.LettersKnown {
		opts.Total = b.Letters
	}
	opts.Deduplication = strings.EqualFold(st.DeduplicationStatus, "Enabled")
	opts.KnownTopics, err = namespaceTopics(ctx, ad, tn)
	return err
}

// namespaceTopics lists the topics of tn's namespace, partitioned ones by their own name: the
// topics a DLQ's name may derive from.
func namespaceTopics(ctx context.Context, ad *admin.Client, tn admin.TopicName) ([]string, error) {
	ns := tn.Tenant + "/" + tn.Namespace
	var out []string
	for _, partitioned := range []bool{false, true} {
		var ts []string
		var err error
		if partitioned {
			ts, err = ad.PartitionedTopics(ctx, ns, tn.Persistent)
		} else {
			ts, err = ad.Topics(ctx, ns, tn.Persistent)
		}
		if err != nil {
			return nil, fmt.Errorf("topics of %s: %w", ns, err)
		}
		out = append(out, ts...)
	}
	return out, nil
}

// chooseSubscription is the durable subscription of topic to act through: given, when topic
// has it, else its only one. Several, or none, is the command line's to settle (usageErr).
func chooseSubscription(st admin.TopicStats, topic, given string) (string, error) {
	durable := triage.Subscriptions(st, true)
	if given == "" {
		if len(durable) != 1 {
			return "", usageErr{fmt.Errorf("%s has %d durable subscriptions (%s): choose one with --subscription",
				topic, len(durable), strings.Join(durable, ", "))}
		}
		return durable[0], nil
	}
	if !slices.Contains(durable, given) {
		return "", usageErr{fmt.Errorf("%s has no durable subscription %q (it has: %s)", topic, given, strings.Join(durable, ", "))}
	}
	return given, nil
}

// connect makes the admin and binary-protocol clients the client flags describe. With OAuth2
// it gets a first token (ctx bounds that), so bad credentials fail here, naming the issuer.
func (c *clientFlags) connect(ctx context.Context, stderr io.Writer) (*admin.Client, *client.Client, error) {
	ts, err := c.tokenSource()
	if err != nil {
		return nil, nil, err
	}
	ao := admin.Options{URL: c.adminURL, Token: c.token, TrustedHosts: c.trustedHosts}
	if ts != nil {
		// Fail at once, naming the issuer, rather than at the first admin call; then each call
		// asks for the token of its moment (renewed before it expires).
		if _, err := ts.Token(ctx); err != nil {
			return nil, nil, err
		}
		ao.Authorization = ts.Authorization
	}
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
	if ao.TLS, err = c.withClientCert(ao.TLS); err != nil { // client_tls.go
		return nil, nil, err
	}
	ad, err := admin.New(ao)
	if err != nil {
		return nil, nil, err
	}
	co := client.Options{ServiceURL: c.serviceURL, Token: c.token, TokenFile: c.tokenFile,
		TLSTrustCertsFile: c.tlsCAFile, TLSAllowInsecureConnection: c.tlsInsecure,
		TLSCertFile: c.clientCert.certFile, TLSKeyFile: c.clientCert.keyFile,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if ts != nil {
		co.TokenSource = ts // only when set: a nil *TokenSource is not a nil interface
	}
	cl, err := client.New(co)
	if err != nil {
		return nil, nil, err
	}
	return ad, cl, nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && IsTerminal(f)
}
