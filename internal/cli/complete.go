package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/themes"
)

// The shells' completion scripts (completion.go) run `letterbox __complete WORD... =CUR`: the
// words typed before the cursor's, then the cursor's word behind an "=", so that an empty word
// is still an argument in every shell. It prints one candidate a line, "value" or
// "value<TAB>description", and last a line ":N", N the directive bits below. It reads the
// command line with the flag sets the commands parse with (commandTable), so what it offers is
// what they take; names of the cluster (topics, DLQs, namespaces, subscriptions) are asked
// from the cluster the flags or --context name, within completionTimeout. It never fails: a
// line it cannot read, or a cluster that does not answer in time, has no candidates.

// completeCommand is the hidden command the completion scripts run.
const completeCommand = "__complete"

// directive tells the completion script what to do besides offering the candidates.
type directive int

const (
	compNoSpace directive = 1 << iota // add no space after the candidate (it goes on: tenant/)
	compFiles                         // complete file names
	compDirs                          // complete directory names
)

// completionTimeoutVar names the environment variable that bounds the cluster's answers: a
// Go duration; 0 asks the cluster nothing.
const completionTimeoutVar = "LETTERBOX_COMPLETION_TIMEOUT"

// defaultCompletionTimeout is short: a tab that waits longer than this for a cluster is worse
// than one that offers nothing.
const defaultCompletionTimeout = time.Second

// candidate is one completion.
type candidate struct {
	value, description string
}

// completion is what __complete answers.
type completion struct {
	candidates []candidate
	directive  directive
}

// runComplete is the hidden `letterbox __complete`.
func runComplete(ctx context.Context, args []string, stdout io.Writer) int {
	timeout := defaultCompletionTimeout
	if v := os.Getenv(completionTimeoutVar); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d >= 0 {
			timeout = d
		}
	}
	var words []string
	cur := ""
	if n := len(args); n > 0 && strings.HasPrefix(args[n-1], "=") {
		words, cur = args[:n-1], args[n-1][1:]
	} else {
		words = args // a script of another version: complete after the last word
	}
	c := complete(ctx, words, cur, clusterNames{timeout: timeout})
	for _, cand := range c.candidates {
		if cand.description != "" {
			fmt.Fprintf(stdout, "%s\t%s\n", cand.value, cand.description)
		} else {
			fmt.Fprintln(stdout, cand.value)
		}
	}
	fmt.Fprintf(stdout, ":%d\n", c.directive)
	return ExitOK
}

// lineState is what the words before the cursor's say: the command they reach, its flag set
// (with the values given so far), and its positional arguments.
type lineState struct {
	cmd        command
	chosen     bool // cmd is a command typed on the line, not letterbox itself
	fs         *flag.FlagSet
	cf         *clientFlags
	positional []string
	dashdash   bool // after "--": every word is positional
}

// flagSetFor registers what cmd's parser registers: its own flags, and the client flags (with
// the values given so far) when it acts as a client.
func flagSetFor(cmd command, cf *clientFlags) *flag.FlagSet {
	fs := newFlagSet("letterbox " + cmd.name)
	if cmd.client {
		cf.registerWithCurrent(fs)
	}
	if cmd.flags != nil {
		cmd.flags(fs)
	}
	return fs
}

// complete answers for cur, the word at the cursor, after words.
func complete(ctx context.Context, words []string, cur string, cluster clusterNames) completion {
	st := &lineState{cf: &clientFlags{}}
	var tf tuiFlags
	st.fs = newFlagSet("letterbox")
	registerRoot(st.fs, st.cf, &tf)
	// letterbox itself is the TUI, a client, whose "subcommands" are the commands.
	st.cmd = command{name: "letterbox", client: true, subs: commandTable()}

	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case st.dashdash:
			st.positional = append(st.positional, w)
		case w == "--":
			st.dashdash = true
		case strings.HasPrefix(w, "-") && w != "-":
			name, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
			f := st.fs.Lookup(name)
			switch {
			case f == nil:
				// Unknown here: a typo, or a flag of a newer letterbox. Read on.
			case isBoolFlag(f) || hasValue:
				if !hasValue {
					value = "true"
				}
				st.fs.Set(name, value)
			case i+1 < len(words):
				i++
				st.fs.Set(name, words[i])
			default:
				// The flag's value is the word at the cursor.
				return completeValue(ctx, st, f, cur, "", cluster)
			}
		default:
			if len(st.cmd.subs) > 0 && len(st.positional) == 0 {
				if sub, ok := findCommand(st.cmd.subs, w); ok && !sub.hidden {
					st.cmd, st.chosen = sub, true
					st.fs = flagSetFor(sub, st.cf)
					continue
				}
			}
			st.positional = append(st.positional, w)
		}
	}

	if !st.dashdash && strings.HasPrefix(cur, "-") {
		if name, value, ok := strings.Cut(strings.TrimLeft(cur, "-"), "="); ok {
			f := st.fs.Lookup(name)
			if f == nil {
				return completion{}
			}
			return completeValue(ctx, st, f, value, cur[:len(cur)-len(value)], cluster)
		}
		return completeFlags(st.fs, cur)
	}
	return completeArg(ctx, st, cur, cluster)
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// completeFlags offers the flags of fs that start with cur, as --name.
func completeFlags(fs *flag.FlagSet, cur string) completion {
	var c completion
	fs.VisitAll(func(f *flag.Flag) {
		name := "--" + f.Name
		if !strings.HasPrefix(name, cur) {
			return
		}
		_, usage := flag.UnquoteUsage(f)
		c.candidates = append(c.candidates, candidate{name, firstClause(usage)})
	})
	return c
}

// firstClause shortens a flag's usage to its first clause, as a description beside the name.
func firstClause(s string) string {
	if i := strings.IndexAny(s, ";("); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// completeArg offers what the positional argument at the cursor may be: a subcommand, or what
// the command's arguments name.
func completeArg(ctx context.Context, st *lineState, cur string, cluster clusterNames) completion {
	if len(st.cmd.subs) > 0 && len(st.positional) == 0 {
		var c completion
		for _, sub := range st.cmd.subs {
			if !sub.hidden && strings.HasPrefix(sub.name, cur) {
				c.candidates = append(c.candidates, candidate{sub.name, sub.summary})
			}
		}
		return c
	}
	if len(st.positional) > 0 {
		return completion{} // every command takes one positional argument at most
	}
	switch st.cmd.args {
	case argDLQ:
		return cluster.dlqs(ctx, st.cf, cur)
	case argNamespace:
		return cluster.namespaces(ctx, st.cf, cur)
	case argShell:
		return choices(shellNames(), cur)
	case argHelp:
		var c completion
		for _, t := range helpTopics {
			if strings.HasPrefix(t.name, cur) {
				c.candidates = append(c.candidates, candidate{t.name, t.summary})
			}
		}
		for _, cmd := range commandTable() {
			if !cmd.hidden && cmd.name != "help" && strings.HasPrefix(cmd.name, cur) {
				c.candidates = append(c.candidates, candidate{cmd.name, cmd.summary})
			}
		}
		return c
	}
	return completion{}
}

// completeValue offers the values of flag f that start with cur; prefix ("--flag=", or "")
// goes before each.
func completeValue(ctx context.Context, st *lineState, f *flag.Flag, cur, prefix string, cluster clusterNames) completion {
	placeholder, _ := flag.UnquoteUsage(f)
	var c completion
	switch {
	case f.Name == "context":
		c = contextNames(cur)
	case f.Name == "theme":
		user, _ := themes.LoadDir(themes.UserDir(os.Getenv))
		c = choices(themes.Names(user), cur)
	case f.Name == "dlq":
		c = cluster.dlqs(ctx, st.cf, cur)
	case f.Name == "subscription":
		c = cluster.subscriptions(ctx, st.cf, st.dlq(), cur)
	case placeholder == "TOPIC":
		c = cluster.topics(ctx, st.cf, cur)
	case placeholder == "FILE" || placeholder == "KEY":
		return completion{directive: compFiles}
	case placeholder == "DIR":
		return completion{directive: compDirs}
	case placeholder != "" && strings.ToLower(placeholder) == placeholder:
		// A placeholder in lower case lists the values themselves: `upstream`, `jsonl|csv`.
		c = choices(strings.Split(placeholder, "|"), cur)
	}
	if prefix != "" {
		for i := range c.candidates {
			c.candidates[i].value = prefix + c.candidates[i].value
		}
	}
	return c
}

// dlq is the DLQ the line names so far: --dlq's value, or a dlq subcommand's argument.
func (st *lineState) dlq() string {
	if f := st.fs.Lookup("dlq"); f != nil {
		return f.Value.String()
	}
	if st.cmd.args == argDLQ && len(st.positional) > 0 {
		return st.positional[0]
	}
	return ""
}

// choices offers the values of list that start with cur.
func choices(list []string, cur string) completion {
	var c completion
	for _, v := range list {
		if strings.HasPrefix(v, cur) {
			c.candidates = append(c.candidates, candidate{value: v})
		}
	}
	return c
}

// contextNames offers the contexts of the configuration file; a file that cannot be read
// offers none.
func contextNames(cur string) completion {
	cfg, err := loadConfig()
	if err != nil {
		return completion{}
	}
	var c completion
	for _, ctx := range cfg.Contexts {
		if strings.HasPrefix(ctx.Name, cur) {
			c.candidates = append(c.candidates, candidate{ctx.Name, ctx.ServiceURL})
		}
	}
	slices.SortFunc(c.candidates, func(a, b candidate) int { return strings.Compare(a.value, b.value) })
	return c
}
