package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client/expr"
)

// TestDLQAndReplayFilterErrors: a bad --filter exits 2 and shows the expression with a caret under the
// column, for the dlq subcommands and for replay; nothing is connected to (no broker runs).
func TestDLQAndReplayFilterErrors(t *testing.T) {
	t.Parallel()
	const want = "%s: --filter: column 9: bad regular expression: missing closing ): `(`\n" +
		"  payload~(\n" +
		"          ^\n"
	for _, args := range [][]string{
		{"dlq", "stats", "orders-DLQ", "--filter", "key=a", "--filter", "payload~("},
		{"dlq", "export", "--filter", "payload~(", "orders-DLQ"},
		{"replay", "--dlq", "orders-DLQ", "--filter", "payload~("},
	} {
		cmd := "letterbox " + args[0]
		if args[0] == "dlq" {
			cmd += " " + args[1]
		}
		code, out, errOut := run(t, args...)
		if w := fmt.Sprintf(want, cmd); code != ExitUsage || out != "" || errOut != w {
			t.Errorf("%q: code %d, stdout %q, stderr\n%s\nwant\n%s", args, code, out, errOut, w)
		}
	}
}

func TestDLQParseFilters(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	e, err := parseFilters([]string{"reason=timeout", `key~^a and "x y"`, "published>=-2h"}, now)
	if err != nil || e.String() != `reason=timeout and key~^a and x y and published>=-2h` {
		t.Errorf("parseFilters = %q, %v", e.String(), err)
	}
	if e, err := parseFilters(nil, now); err != nil || !e.Empty() {
		t.Errorf("no filter: %v, %v", e, err)
	}
}

// TestFilterGrammarInHelp: every command that takes --filter lists every form of the grammar
// in its --help (from client/expr's one list).
func TestFilterGrammarInHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"dlq", "stats"}, {"dlq", "export"}, {"dlq", "discard"}, {"replay"}} {
		code, out, _ := run(t, append(args, "--help")...)
		if code != ExitOK || !strings.Contains(out, "--filter EXPR") {
			t.Fatalf("%q --help: code %d\n%s", args, code, out)
		}
		for _, f := range expr.Forms() {
			if !strings.Contains(out, f.Syntax) {
				t.Errorf("%q --help lacks the form %q", args, f.Syntax)
			}
		}
	}
}
