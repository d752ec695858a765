// Package cli is letterbox's command line, as docs/design.md "Command line" fixes it: it parses the
// arguments and runs the command. main.go only hands it the process (arguments, standard
// streams, a context cancelled by SIGINT/SIGTERM) and exits with the code Run returns; nothing
// here writes to os.Stdout or os.Stderr directly.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/charmbracelet/x/term"

	"github.com/letterbox-dev/letterbox/client/termtext"
)

// Exit codes.
const (
	ExitOK      = 0 // done, or stopped by a signal
	ExitFailure = 1 // the command failed while running (a port in use, ...)
	ExitUsage   = 2 // bad command line or configuration, or a command not available yet
	ExitNothing = 3 // an action's selection, valid, matched no letter: nothing was done
)

// exitStatusHelp is how the commands that act on letters end, for their --help.
const exitStatusHelp = `Exit status: 0 done; 1 failed while running (something selected was not done); 2 bad
command line, expression or empty selection, a topic that is no DLQ, or no confirmation
given where one is needed; 3 nothing selected (a valid selection that matched no letter:
nothing done, recorded so in the history).
`

// Process is what the process running the command line lets it change about itself.
type Process struct {
	// SetProcs sets how many CPUs may run Go code at once (runtime.GOMAXPROCS). Nil leaves the
	// runtime as it is: tests run commands inside their own process.
	SetProcs func(n int)
	// Stdin is the standard input: the dlq actions read their confirmation from it, and
	// resend --edit hands it to the editor. Nil reads nothing.
	Stdin io.Reader
	// StdinTerminal says a person types at Stdin (a terminal): only then does a command ask
	// a question instead of refusing to act without --yes.
	StdinTerminal bool
}

// IsTerminal reports whether f is a terminal: not a file, a pipe, or another character
// device such as /dev/null (the stdin of cron jobs and services, where no one answers).
func IsTerminal(f *os.File) bool { return term.IsTerminal(f.Fd()) }

// Run runs the command line args (without the program name), writing results to stdout and
// diagnostics to stderr, until the command ends or ctx is cancelled, and returns the exit code.
// It changes nothing about the process and reads no standard input (no terminal: an action
// without --yes is refused); main uses RunProcess, and so do tests that answer a question.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return RunProcess(ctx, Process{}, args, stdout, stderr)
}

// RunProcess is Run for the letterbox process itself, which commands may tune (p).
func RunProcess(ctx context.Context, p Process, args []string, stdout, stderr io.Writer) int {
	var client clientFlags
	var tf tuiFlags
	fs := newFlagSet("letterbox")
	showVersion := registerRoot(fs, &client, &tf)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return ExitOK
		}
		return usageError(stderr, "letterbox", err)
	}
	client.noteSet(fs)
	if *showVersion {
		printVersion(stdout)
		return ExitOK
	}

	rest := fs.Args()
	if len(rest) == 0 {
		if err := client.validate(); err != nil {
			return usageError(stderr, "letterbox", err)
		}
		return runTUI(ctx, &client, &tf, stderr)
	}
	commands := commandTable()
	cmd, ok := findCommand(commands, rest[0])
	if !ok {
		return usageError(stderr, "letterbox", fmt.Errorf("unknown command %q", rest[0]))
	}
	if !cmd.client && len(client.set) > 0 {
		// The command does not act as a client: client flags given before it would be ignored.
		return usageError(stderr, "letterbox "+cmd.name,
			fmt.Errorf("--%s applies to the TUI and replay, not to %s", client.firstSet(), cmd.name))
	}
	return cmd.run(ctx, invocation{p: p, client: &client, tui: &tf, stdout: stdout, stderr: stderr}, rest[1:])
}

const usageText = `letterbox: a terminal UI for Apache Pulsar dead-letter and retry flows, with an embedded
Pulsar-compatible broker.

Usage:
  letterbox [client flags]          TUI on the embedded broker, or on the cluster named by
                                    --service-url/--admin-url or --context
  letterbox demo                    embedded broker + demo workload + TUI
  letterbox broker [broker flags]   headless broker; prints "ready pulsar://… http://…" on stdout
  letterbox replay --dlq TOPIC ...  headless replay of dead letters (letterbox replay --help)
  letterbox dlq ls|stats|causes|export
                                    list DLQs; count, split into causes or export their letters
                                    without consuming them (letterbox dlq --help)
  letterbox dlq discard|purge|resend|subscribe
                                    act on dead letters, after a confirmation (or --yes)
  letterbox token ...               make a secret key or a token (letterbox token --help)
  letterbox completion SHELL        shell completion: bash, zsh, fish or powershell
                                    (letterbox completion --help)
  letterbox help [TOPIC|COMMAND]    this help, a command's, or a topic's: filter, dlq-rule,
                                    config
  letterbox version | --version     print the version

Client flags (the TUI, replay and dlq):
`

// usage writes the top-level help.
func usage(w io.Writer) {
	io.WriteString(w, usageText)
	var c clientFlags
	fs := newFlagSet("letterbox")
	c.register(fs)
	printFlags(w, fs, clientFlagNames)
	io.WriteString(w, "\nTUI flags (letterbox and demo):\n")
	var t tuiFlags
	t.register(fs)
	printFlags(w, fs, tuiFlagNames)
	io.WriteString(w, "\nBroker flags: letterbox broker --help\n")
}

// newFlagSet returns a flag set that reports errors to its caller instead of printing them.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// printFlags lists the named flags of fs in GNU style: --name VALUE, then the help and the
// default.
func printFlags(w io.Writer, fs *flag.FlagSet, names []string) {
	for _, n := range names {
		f := fs.Lookup(n)
		name, help := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		if len(line) > 28 {
			// Too long to share its line with the help: the help goes under it.
			fmt.Fprintln(w, line)
			line = ""
		}
		fmt.Fprintf(w, "%-28s %s", line, help)
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		io.WriteString(w, "\n")
	}
}

// usageError reports a command-line mistake and returns ExitUsage.
func usageError(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", cmd, errText(err), cmd)
	return ExitUsage
}

// printError writes "cmd: err". An error may quote what the cluster holds (a topic's name, a
// broker's reason, a letter's REAL_TOPIC): errText writes its control characters visibly.
func printError(stderr io.Writer, cmd string, err error) {
	fmt.Fprintf(stderr, "%s: %s\n", cmd, errText(err))
}

func errText(err error) string { return termtext.Block(err.Error()) }
