package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/termtext"
)

// letterbox dlq: dead-letter queues from the command line. ls, stats and export read through
// the admin API and non-durable readers (client/triage): none acknowledges a letter or creates
// a subscription, so running one on a production DLQ changes nothing its applications or a
// replay see. discard, purge, resend and subscribe act: each previews, asks (confirm.go), acts
// and records what it did in the replay history; a read-only session refuses them.

// dlqCommand is one subcommand of "letterbox dlq".
type dlqCommand struct {
	name, args, help string
	run              func(ctx context.Context, cf *clientFlags, in stdin, args []string, stdout, stderr io.Writer) int
	// flags registers the subcommand's own flags, as its run does (completion reads them).
	flags func(fs *flag.FlagSet)
}

// dlqCommands are the subcommands, in the order of the help; a new one is one entry here.
var dlqCommands = []dlqCommand{
	{"ls", "[NAMESPACE]", "list the DLQs of a namespace (tenant/ns), or of the whole cluster", runDLQLs, fresh[lsFlags]()},
	{"stats", "DLQ", "count a DLQ's letters by reason, origin, subscription, key and hour", runDLQStats, fresh[statsFlags]()},
	{"causes", "DLQ", "split a DLQ's letters into the few groups that explain why they died", runDLQCauses, fresh[causesFlags]()},
	{"export", "DLQ", "write a DLQ's letters, payloads included, as JSON lines or CSV", runDLQExport, fresh[exportFlags]()},
	{"discard", "DLQ", "acknowledge the letters a filter, ids or a limit select, one by one", runDLQDiscard, fresh[discardFlags]()},
	{"purge", "DLQ", "clear a DLQ subscription's backlog, or skip its first --count letters", runDLQPurge, fresh[purgeFlags]()},
	{"resend", "DLQ --id L:E", "send one letter again, edited, to its origin or --to a topic", runDLQResend, fresh[resendFlags]()},
	{"subscribe", "DLQ", "create the subscription a DLQ lacks; set its namespace's retention", runDLQSubscribe, fresh[subscribeFlags]()},
}

// fresh registers the flags of a new T at each call: completion and help register a command's
// flags while other commands (and parallel tests) do, and a T shared by every call would be
// written by several at once.
func fresh[T any, P interface {
	*T
	register(*flag.FlagSet)
}]() func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) { P(new(T)).register(fs) }
}

const dlqUsageText = `Usage: letterbox dlq SUBCOMMAND [ARGS] [flags] [client flags]

Dead-letter queues from the command line. ls, stats, causes and export consume nothing: letters are
read with non-durable readers, never acknowledged, and no subscription is created. discard,
purge, resend and subscribe change the DLQ: each says what it will do and asks first (--yes
answers for a script), and is refused in a read-only session (--readonly, or a context with
readonly = true). Every action is recorded in the replay history.

DLQ is a topic's name: x, namespace/x, tenant/namespace/x or persistent://tenant/namespace/x.
A short name is the one topic of that name in any namespace of the cluster, as the TUI finds
it; a name several namespaces hold is refused with the list (exit 2). discard, purge, resend
and subscribe (and replay) act only on a topic the DLQ rule calls a dead-letter or retry topic
(letterbox help dlq-rule); --not-a-dlq acts on another one.

Subcommands:
`

// runDLQ runs "letterbox dlq SUBCOMMAND ...". Client flags may come before "dlq", between it
// and the subcommand, and after the subcommand.
func runDLQ(ctx context.Context, cf *clientFlags, in stdin, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("letterbox dlq")
	cf.registerWithCurrent(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			dlqUsage(stdout)
			return ExitOK
		}
		return usageError(stderr, "letterbox dlq", err)
	}
	cf.noteSet(fs)
	if fs.NArg() == 0 {
		// A missing subcommand is a mistake of the command line: the help goes where errors do.
		dlqUsage(stderr)
		return ExitUsage
	}
	name, rest := fs.Arg(0), fs.Args()[1:]
	for _, c := range dlqCommands {
		if c.name == name {
			return c.run(ctx, cf, in, rest, stdout, stderr)
		}
	}
	if name == "help" {
		dlqUsage(stdout)
		return ExitOK
	}
	return usageError(stderr, "letterbox dlq", fmt.Errorf("unknown subcommand %q (subcommands: %s)", name, dlqNames()))
}

func dlqNames() string {
	names := make([]string, len(dlqCommands))
	for i, c := range dlqCommands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// dlqUsage writes the help of "letterbox dlq".
func dlqUsage(w io.Writer) {
	io.WriteString(w, dlqUsageText)
	for _, c := range dlqCommands {
		fmt.Fprintf(w, "  %-22s %s\n", c.name+" "+c.args, c.help)
	}
	io.WriteString(w, "\nRun 'letterbox dlq SUBCOMMAND --help' for its flags.\n\n"+exitStatusHelp+"\nClient flags:\n")
	var c clientFlags
	fs := newFlagSet("letterbox dlq")
	c.register(fs)
	printFlags(w, fs, clientFlagNames)
}

// dlqSub is what a subcommand's command line is parsed with.
type dlqSub struct {
	cmd   string   // "letterbox dlq ls", for messages
	usage string   // the help's text before the flags
	flags []string // the subcommand's own flags, in the order of the help
}

// parse parses a subcommand's arguments: its own flags (register adds them), the client flags,
// and positional arguments anywhere among them, so that "stats orders-DLQ --json" works as
// "stats --json orders-DLQ" does. It checks the client flags and applies --context. ok is
// false when the command is over (help shown, or a usage error), with its exit code.
func (s dlqSub) parse(cf *clientFlags, args []string, register func(*flag.FlagSet), stdout, stderr io.Writer) (pos []string, code int, ok bool) {
	fs := newFlagSet(s.cmd)
	cf.registerWithCurrent(fs)
	register(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, s.usage)
			printFlags(stdout, fs, s.flags)
			if slices.Contains(s.flags, "filter") {
				writeFilterHelp(stdout)
			}
			if slices.Contains(s.flags, "yes") { // the actions, which ask first
				io.WriteString(stdout, "\n"+exitStatusHelp)
			}
			io.WriteString(stdout, "\nClient flags:\n")
			var c clientFlags
			cfs := newFlagSet(s.cmd)
			c.register(cfs)
			printFlags(stdout, cfs, clientFlagNames)
			return nil, ExitOK, false
		}
		return nil, usageError(stderr, s.cmd, err), false
	}
	cf.noteSet(fs)
	if err := cf.validate(); err != nil {
		return nil, usageError(stderr, s.cmd, err), false
	}
	if _, code := cf.resolveContext(s.cmd, stderr); code != ExitOK {
		return nil, code, false
	}
	return pos, ExitOK, true
}

// parseInterspersed parses flags and positional arguments in any order; after "--" every
// argument is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// openDLQ connects as the client flags say and finds the DLQ arg names. On failure it reports
// and returns the exit code: 2 for a name that is no topic name, 1 otherwise (not found
// included). The caller closes cl.
func openDLQ(ctx context.Context, cf *clientFlags, cmd, arg string, stderr io.Writer) (ad *admin.Client, cl *client.Client, topic string, code int) {
	ad, cl, err := cf.connect(ctx, stderr)
	if err != nil {
		printError(stderr, cmd, err)
		return nil, nil, "", ExitFailure
	}
	topic, err = dlqops.Resolve(ctx, ad, arg)
	if err != nil {
		cl.Close()
		if isUsage(err) {
			return nil, nil, "", usageError(stderr, cmd, err)
		}
		printError(stderr, cmd, fmt.Errorf("DLQ %w", err))
		return nil, nil, "", ExitFailure
	}
	return ad, cl, topic, ExitOK
}

// readSubscription settles whose letters a read of topic shows (dlqops.ReadSubscription); "" when
// it has none, which is said on stderr (every retained letter is read then). Failures are
// reported, with the exit code.
func readSubscription(ctx context.Context, ad *admin.Client, cmd, topic, given string, includeAcked bool, stderr io.Writer) (string, int) {
	sub, err := dlqops.ReadSubscription(ctx, ad, topic, given)
	switch {
	case dlqops.IsRefusal(err):
		return "", usageError(stderr, cmd, err)
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return "", ExitFailure
	case given != "":
		return given, ExitOK
	}
	switch {
	case sub == "":
		fmt.Fprintf(stderr, "%s: %s has no durable subscription: every letter it retains is read, whoever acknowledged it\n", cmd, termtext.Line(shortTopic(topic)))
	case includeAcked:
		fmt.Fprintf(stderr, "%s: letters of %s, those %s acknowledged included\n", cmd, termtext.Line(shortTopic(topic)), termtext.Line(sub))
	}
	return sub, ExitOK
}

// scanFailed reports why a scan of topic ended before its end and returns ExitFailure.
func scanFailed(ctx context.Context, stderr io.Writer, cmd, topic string, err error) int {
	switch {
	case errors.Is(err, dlqops.ErrTopicGone):
		fmt.Fprintf(stderr, "%s: %s: the DLQ was deleted during the scan\n", cmd, topic)
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "%s: %s: interrupted\n", cmd, topic)
	default:
		printError(stderr, cmd, err)
	}
	return ExitFailure
}

// shortTopic is a topic's name as a table shows it (naming.ShortName, public/default's
// without their namespace), safe to print.
func shortTopic(full string) string {
	return termtext.Line(naming.ShortName(full, naming.DefaultNamespaceName))
}
