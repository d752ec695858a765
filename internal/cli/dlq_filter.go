package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/expr"
)

// The --filter flag of the dlq subcommands, and how a bad expression is reported there and by
// letterbox replay.

// filterHelp is the help of --filter; writeFilterHelp lists the grammar under the flags.
const filterHelp = "select letters by `EXPR` (see Filter expressions below); repeatable, ANDed"

// writeFilterHelp writes the filter grammar for a --help: client/expr's forms, the one list
// the documentation is checked against.
func writeFilterHelp(w io.Writer) {
	io.WriteString(w, "\nFilter expressions (--filter):\n")
	io.WriteString(w, expr.Usage("  ", 100))
}

// parseFilters parses every --filter expression and joins them with "and"; now anchors
// relative times (published>=-2h). No expression gives nil, which selects every letter.
func parseFilters(filters []string, now time.Time) (*expr.Expr, error) {
	var all *expr.Expr
	for _, f := range filters {
		e, err := expr.Parse(f, now)
		if err != nil {
			return nil, err
		}
		all = all.And(e)
	}
	return all, nil
}

// filterError reports a bad --filter and returns ExitUsage. A syntax error shows the
// expression with a caret under the column, since a long expression is hard to count in:
//
//	letterbox dlq stats: --filter: column 9: bad regular expression: missing closing ): `(`
//	  payload~(
//	          ^
func filterError(stderr io.Writer, cmd string, err error) int {
	var se *expr.SyntaxError
	if !errors.As(err, &se) {
		return usageError(stderr, cmd, fmt.Errorf("--filter: %w", err))
	}
	fmt.Fprintf(stderr, "%s: --filter: %v\n", cmd, se)
	for line := range strings.Lines(se.Pointer()) {
		fmt.Fprintf(stderr, "  %s", strings.TrimSuffix(line, "\n")+"\n")
	}
	return ExitUsage
}
