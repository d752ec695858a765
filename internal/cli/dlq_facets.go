package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/termtext"
)

// The facets of a DLQ's letters on the command line: `dlq stats --by FACET` and what
// `dlq causes` prints. client/triage counts them; this file names them and writes them.

// facetList is --by: facet names (dlqops.ParseFacet), repeatable.
type facetList []string

func (l *facetList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(*l, ",")
}

func (l *facetList) Set(v string) error {
	name, err := dlqops.ParseFacet(strings.TrimSpace(v))
	if err != nil {
		return err
	}
	*l = append(*l, name)
	return nil
}

// writeFacet writes one facet: count, share of total, value, and the expression that selects
// the value's letters, then what the values listed leave out.
func writeFacet(w io.Writer, s dlqops.FacetSummary, total int64) {
	distinct := strconv.FormatInt(s.Distinct, 10)
	if s.DistinctAtLeast {
		distinct = "≥ " + distinct
	}
	fmt.Fprintf(w, "\nby %s (%s distinct)\n", termtext.Line(s.Name), distinct)
	width, valueWidth := 1, 1
	for _, v := range s.Values {
		width = max(width, len(strconv.FormatInt(v.Letters, 10)))
		valueWidth = max(valueWidth, min(len(termtext.Line(v.Value)), 32))
	}
	for _, v := range s.Values {
		fmt.Fprintf(w, "  %*d  %5.1f%%  %-*s  %s\n", width, v.Letters, float64(v.Letters)*100/float64(max(total, 1)),
			valueWidth, termtext.Line(v.Value), termtext.Line(v.Expr))
	}
	if s.Singles > 0 {
		fmt.Fprintf(w, "  %*d  %5.1f%%  %s\n", width, s.Singles, float64(s.Singles)*100/float64(max(total, 1)),
			plural(s.Singles, "value")+" of one letter each")
	}
	if other := s.Unlisted - s.Singles - s.PastCap; other > 0 {
		fmt.Fprintf(w, "  %*d  %5.1f%%  %s\n", width, other, float64(other)*100/float64(max(total, 1)),
			"letters in values not listed")
	}
	if s.PastCap > 0 {
		fmt.Fprintf(w, "  %*d  %5.1f%%  %s\n", width, s.PastCap, float64(s.PastCap)*100/float64(max(total, 1)),
			"letters in values past the facet's cap, not told apart")
	}
	for _, e := range s.Errors {
		fmt.Fprintf(w, "  %*d  %5.1f%%  does not decode: %s\n", width, e.N, float64(e.N)*100/float64(max(total, 1)), termtext.Line(e.Name))
	}
	if s.Note != "" {
		fmt.Fprintf(w, "  (%s)\n", s.Note)
	}
}
