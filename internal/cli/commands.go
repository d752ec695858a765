package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
)

// command is one command of the command line. RunProcess dispatches through commandTable, and
// completion (complete.go) and `letterbox help` read the same entries, with the flags each
// command's parser registers: a command, flag or argument added here is parsed, completed and
// listed without a second list to keep in step.
type command struct {
	name    string
	summary string // one line: completion shows it beside the name
	// client says that the command acts as a client (the TUI, replay, dlq): client flags given
	// before its name apply to it, and it takes them after its name too. The other commands
	// refuse client flags before their name.
	client bool
	// flags registers the command's own flags on fs, as its parser does; nil: none.
	flags func(fs *flag.FlagSet)
	// args is what the command's positional arguments name, for completion.
	args argKind
	// subs are the subcommands (dlq's, token's); the command's run dispatches them.
	subs []command
	// hidden commands are neither listed nor completed: the shells' completion entry point.
	hidden bool
	run    func(ctx context.Context, in invocation, args []string) int
}

// invocation is what RunProcess hands a command: the process, the client and TUI flags given
// before the command's name, and where output goes.
type invocation struct {
	p              Process
	client         *clientFlags
	tui            *tuiFlags
	stdout, stderr io.Writer
}

// argKind is what a positional argument names, for completion.
type argKind int

const (
	argNone      argKind = iota
	argDLQ               // a DLQ of the cluster
	argNamespace         // a namespace of the cluster, tenant/ns
	argShell             // a shell completion knows
	argHelp              // a help topic or a command
)

// commandTable lists the commands in the order of the help. It is a function, not a variable:
// completion and help, which some of these commands run, read it in turn.
func commandTable() []command {
	return []command{
		{name: "broker", summary: "headless embedded broker", flags: new(brokerFlags).register,
			run: func(ctx context.Context, in invocation, args []string) int {
				return runBroker(ctx, in.p, args, in.stdout, in.stderr)
			}},
		{name: "demo", summary: "embedded broker, demo workload and the TUI", flags: new(tuiFlags).register,
			run: func(ctx context.Context, in invocation, args []string) int {
				return runDemo(ctx, args, in.tui, in.stdout, in.stderr)
			}},
		{name: "replay", summary: "replay dead letters to where they came from", client: true, flags: new(replayFlags).register,
			run: func(ctx context.Context, in invocation, args []string) int {
				return runReplay(ctx, in.client, stdin{r: in.p.Stdin, terminal: in.p.StdinTerminal && in.p.Stdin != nil}, args, in.stdout, in.stderr)
			}},
		{name: "dlq", summary: "list, count, export and act on dead-letter topics", client: true, subs: dlqSubcommands(),
			run: func(ctx context.Context, in invocation, args []string) int {
				return runDLQ(ctx, in.client, stdin{r: in.p.Stdin, terminal: in.p.StdinTerminal && in.p.Stdin != nil}, args, in.stdout, in.stderr)
			}},
		{name: "token", summary: "make a secret key or a token", subs: tokenCommands(),
			run: func(_ context.Context, in invocation, args []string) int { return runToken(args, in.stdout, in.stderr) }},
		{name: "completion", summary: "shell completion script: bash, zsh, fish or powershell", args: argShell,
			run: func(_ context.Context, in invocation, args []string) int {
				return runCompletion(args, in.stdout, in.stderr)
			}},
		{name: "version", summary: "print the version",
			run: func(_ context.Context, in invocation, args []string) int {
				return runVersion(args, in.stdout, in.stderr)
			}},
		{name: "help", summary: "help on a command or a topic", args: argHelp,
			run: func(_ context.Context, in invocation, args []string) int { return runHelp(args, in.stdout, in.stderr) }},
		{name: completeCommand, hidden: true,
			run: func(ctx context.Context, in invocation, args []string) int {
				return runComplete(ctx, args, in.stdout)
			}},
	}
}

// findCommand returns the command of cmds named name.
func findCommand(cmds []command, name string) (command, bool) {
	for _, c := range cmds {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// commandNames lists the names of the commands that are not hidden, for messages.
func commandNames(cmds []command) string {
	var names []string
	for _, c := range cmds {
		if !c.hidden {
			names = append(names, c.name)
		}
	}
	return strings.Join(names, ", ")
}

// registerRoot registers the flags of `letterbox` itself: the client flags, the TUI's, and
// --version. Completion registers them with the same function.
func registerRoot(fs *flag.FlagSet, cf *clientFlags, tf *tuiFlags) *bool {
	cf.register(fs)
	tf.register(fs)
	return fs.Bool("version", false, "print the version and exit")
}

// dlqSubcommands are dlqCommands as the command table describes them.
func dlqSubcommands() []command {
	subs := make([]command, len(dlqCommands))
	for i, c := range dlqCommands {
		kind := argNone
		switch {
		case strings.HasPrefix(c.args, "DLQ"):
			kind = argDLQ
		case strings.Contains(c.args, "NAMESPACE"):
			kind = argNamespace
		}
		subs[i] = command{name: c.name, summary: c.help, client: true, flags: c.flags, args: kind}
	}
	return subs
}

// runVersion is `letterbox version`.
func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
			io.WriteString(stdout, "Usage: letterbox version\n\nPrints the version, the commit it was built from and the Go toolchain.\n")
			return ExitOK
		}
		return usageError(stderr, "letterbox version", fmt.Errorf("unexpected argument %q", args[0]))
	}
	printVersion(stdout)
	return ExitOK
}
