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
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/termtext"
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
	fs.IntVar(&r.maxReplays, "max-replays", dlqops.DefaultMaxReplays, "skip messages already replayed `N` times (loop guard; negative: none)")
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
	rf, code, ok := parseReplay(cf, args, stdout, stderr)
	if !ok {
		return code
	}
	req, err := rf.request(cf)
	var fe filterErr
	switch {
	case errors.As(err, &fe):
		return filterError(stderr, "letterbox replay", fe.error)
	case err != nil:
		return usageError(stderr, "letterbox replay", err)
	}
	if !req.DryRun {
		if code := cf.refuseReadOnly("letterbox replay", "replay dead letters (--dry-run only shows what would move)", stderr); code != ExitOK {
			return code
		}
	}
	ad, cl, err := cf.connect(ctx, stderr)
	if err != nil {
		printError(stderr, "letterbox replay", err)
		return ExitFailure
	}
	defer cl.Close()
	opts, code, ok := prepareReplay(ctx, ad, cl, in, req, rf, stderr)
	if !ok {
		return code
	}
	return replayAndReport(ctx, cl, cf, opts, rf, stdout, stderr)
}

// parseReplay parses replay's command line: its flags and the client flags. ok is false when
// the command is over (help shown, or a usage error), with its exit code.
func parseReplay(cf *clientFlags, args []string, stdout, stderr io.Writer) (rf *replayFlags, code int, ok bool) {
	fs := newFlagSet("letterbox replay")
	// Client flags are accepted before and after "replay"; the ones given before are the
	// defaults here.
	cf.registerWithCurrent(fs)
	rf = &replayFlags{}
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
			return nil, ExitOK, false
		}
		return nil, usageError(stderr, "letterbox replay", err), false
	}
	cf.noteSet(fs)
	if err := cf.validate(); err != nil {
		return nil, usageError(stderr, "letterbox replay", err), false
	}
	if _, code := cf.resolveContext("letterbox replay", stderr); code != ExitOK {
		return nil, code, false
	}
	if fs.NArg() > 0 {
		return nil, usageError(stderr, "letterbox replay", fmt.Errorf("unexpected argument %q", fs.Arg(0))), false
	}
	return rf, ExitOK, true
}

// request is the replay the flags ask for, in client/dlqops's words; an error is the command
// line's mistake.
func (r *replayFlags) request(cf *clientFlags) (dlqops.Request, error) {
	req := dlqops.Request{DLQ: r.dlq, Subscription: r.subscription, To: r.to, Destination: r.destination,
		IDs: r.ids.text, Filters: r.filters, Limit: r.limit, Rate: r.rate, DryRun: r.dryRun, New: r.fresh,
		MaxReplays: r.maxReplays, AllowCrossTenant: r.crossTenant, Cluster: dlqops.ClusterKey(cf.context, cf.adminURL)}
	switch {
	case r.dlq == "":
		return req, errors.New("--dlq TOPIC is required")
	case r.to != "" && r.destination != "":
		return req, errors.New("--to and --destination exclude each other (--destination takes every letter)")
	}
	if r.until != "" {
		id, err := client.ParseMessageID(r.until)
		if err != nil {
			return req, fmt.Errorf("--until: %w", err)
		}
		req.Until = &id
	}
	switch {
	case r.maxReplays == 0:
		return req, errors.New("--max-replays must be at least 1 (negative: no loop guard)")
	case r.maxReplays < 0:
		req.MaxReplays = -1
	}
	for _, expr := range r.filters {
		if _, err := dlqops.ParseFilter(expr); err != nil {
			return req, filterErr{err}
		}
	}
	if r.limit < 0 || r.rate < 0 {
		return req, errors.New("--limit and --rate must not be negative")
	}
	return req, nil
}

// filterErr is a --filter the engine cannot read.
type filterErr struct{ error }

// prepareReplay turns req into the engine's options (client/dlqops.PrepareNamed: the DLQ it
// names, refused when it is no DLQ unless --not-a-dlq), refuses a destination in another
// tenant without --allow-cross-tenant, asks before every letter of a large DLQ, and refuses
// part of a batch the broker cannot acknowledge in part. ok is false when the command is over,
// with its exit code.
func prepareReplay(ctx context.Context, ad *admin.Client, cl *client.Client, in stdin, req dlqops.Request, rf *replayFlags,
	stderr io.Writer) (opts dlqops.ReplayOptions, code int, ok bool) {
	const cmd = "letterbox replay"
	fail := func(err error) (dlqops.ReplayOptions, int, bool) {
		if err = flagWords(cmd, err); isUsage(err) {
			return opts, usageError(stderr, cmd, err), false
		}
		printError(stderr, cmd, err)
		return opts, ExitFailure, false
	}
	var err error
	if opts, err = dlqops.PrepareNamed(ctx, ad, req, rf.notADLQ); err != nil {
		return fail(err)
	}
	if err := refuseCrossTenant(opts.DLQ, rf); err != nil {
		return opts, usageError(stderr, cmd, err), false
	}
	if ok, code := confirmEveryLetter(in, opts, rf.yes, stderr); !ok {
		return opts, code, false
	}
	var pe *dlqops.PartOfBatchError
	if err := dlqops.CheckBatches(ctx, cl, opts); errors.As(err, &pe) {
		// Letters moved out of a batch the broker cannot acknowledge in part would be moved
		// and come back: refused before anything is sent.
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return opts, ExitUsage, false
	} else if err != nil {
		return fail(err)
	}
	return opts, ExitOK, true
}

// replayAndReport runs the replay, shows its events, writes its summary, records it in the
// history and returns the exit code.
func replayAndReport(ctx context.Context, cl *client.Client, cf *clientFlags, opts dlqops.ReplayOptions, rf *replayFlags, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		printError(stderr, "letterbox replay", err)
		return ExitFailure
	}
	sayResuming(opts, time.Now(), stderr)
	opts.Names = propertyNames(opts.Selection.Filters)
	shower := newEventShower(rf, opts.DryRun, stdout, stderr)
	started := time.Now()
	sum, err := dlqops.Run(ctx, cl, opts, shower.show)
	dests := shower.finish()
	writeSummary(sum, rf, opts, dests, stdout)
	warnUnseen(stderr, "letterbox replay", opts.Names)
	if !opts.DryRun {
		recordHistory(opts, rf, cf, sum, err, started, stderr)
	}
	switch {
	case errors.Is(err, dlqops.ErrBusy):
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
			termtext.Line(shortTopic(opts.DLQ)), termtext.Line(opts.Subscription), termtext.Line(replaySelection(opts, rf))))
	}
	return ExitOK
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
