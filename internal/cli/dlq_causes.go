package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/client/termtext"
)

// causesFlags are the flags of "letterbox dlq causes".
type causesFlags struct {
	subscription string
	filters      filterList
	json         bool
}

func (f *causesFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.subscription, "subscription", "", "split the letters subscription `S` has not acknowledged (default: the DLQ's main subscription)")
	fs.Var(&f.filters, "filter", filterHelp)
	fs.BoolVar(&f.json, "json", false, "write the groups as one JSON object to stdout")
}

var dlqCauses = dlqSub{cmd: "letterbox dlq causes", flags: []string{"subscription", "filter", "json"},
	usage: `Usage: letterbox dlq causes DLQ [--subscription S] [--filter EXPR]... [--json] [client flags]

Reads the letters of DLQ that its subscription has not acknowledged (as 'letterbox dlq stats'
does, consuming nothing), counts their facets — the key, every property, the payload's kind,
whether it decodes with the schema it was written with, its top-level JSON fields and size, the
producer, the schema version, the publish and event hours — and splits the letters the filters
select into at most five groups that explain them, each described by the one or two values that
set it apart ("8900 · property region=eu"), and the rest. Letters that carry a reason property
are grouped by reason first. Groups are disjoint: each one's expression leaves out the groups
before it, so their counts add up to the selection, and each count is exactly what its
expression selects: pass it to --filter of 'letterbox dlq discard', 'letterbox replay' or
'letterbox dlq stats'. Values nearly every letter has are listed as common, not as causes. The
rule is in docs/dead-letters.md ("Causes"). With --json, one object: topic, subscription (null
for none), filter, letters, groups and rest (label, expr, letters), common (value, letters,
expr), approx (why the counts may be off, when they may), complete and elapsed (seconds).

Flags:
`}

// causesJSON is the output of --json.
type causesJSON struct {
	Topic        string              `json:"topic"`
	Subscription *string             `json:"subscription"`
	Filter       string              `json:"filter"`
	Letters      int64               `json:"letters"`
	Groups       []dlqops.Cause      `json:"groups"`
	Rest         dlqops.Cause        `json:"rest"`
	Common       []dlqops.FacetValue `json:"common"`
	Approx       string              `json:"approx,omitempty"`
	Complete     bool                `json:"complete"`
	Elapsed      float64             `json:"elapsed"` // seconds
}

func runDLQCauses(ctx context.Context, cf *clientFlags, _ stdin, args []string, stdout, stderr io.Writer) int {
	var f causesFlags
	pos, code, ok := dlqCauses.parse(cf, args, f.register, stdout, stderr)
	if !ok {
		return code
	}
	if code := oneDLQ(dlqCauses.cmd, pos, stderr); code != ExitOK {
		return code
	}
	filter, err := parseFilters(f.filters, time.Now())
	if err != nil {
		return filterError(stderr, dlqCauses.cmd, err)
	}
	ad, cl, topic, code := openDLQ(ctx, cf, dlqCauses.cmd, pos[0], stderr)
	if code != ExitOK {
		return code
	}
	defer cl.Close()
	sub, code := readSubscription(ctx, ad, dlqCauses.cmd, topic, f.subscription, false, stderr)
	if code != ExitOK {
		return code
	}
	names := deadletter.NewPropertyNames(filter.Properties())
	res, err := dlqops.Scan(ctx, cl, dlqops.ScanOptions{Topic: topic, Subscription: sub, Filter: filter, NoIndex: true,
		Facets: true, Admin: ad, Progress: scanProgress(stderr), Names: names})
	if err != nil {
		return scanFailed(ctx, stderr, dlqCauses.cmd, topic, err)
	}
	warnUnseen(stderr, dlqCauses.cmd, names)
	split := selectionCauses(res.Facets.Causes(), filter)
	if f.json {
		out := causesJSON{Topic: topic, Filter: filter.String(), Letters: split.Letters, Groups: split.Groups, Rest: split.Rest,
			Common: split.Common, Approx: res.Approx, Complete: res.Complete, Elapsed: res.Elapsed.Seconds()}
		if sub != "" {
			out.Subscription = &sub
		}
		if out.Groups == nil {
			out.Groups = []dlqops.Cause{}
		}
		if out.Common == nil {
			out.Common = []dlqops.FacetValue{}
		}
		json.NewEncoder(stdout).Encode(out)
		return ExitOK
	}
	writeCauses(stdout, res, sub, filter.String(), split)
	return ExitOK
}

// selectionCauses makes each expression of split select its letters on its own: the
// filter the scan selected with goes in front of it.
func selectionCauses(split dlqops.CauseSplit, filter *expr.Expr) dlqops.CauseSplit {
	if filter.Empty() {
		return split
	}
	with := func(c *dlqops.Cause) {
		if c.Expr == "" {
			return
		}
		if e, err := expr.Parse(c.Expr, time.Now()); err == nil {
			c.Expr = filter.And(e).String()
		}
	}
	for i := range split.Groups {
		with(&split.Groups[i])
	}
	with(&split.Rest)
	for i := range split.Common {
		if e, err := expr.Parse(split.Common[i].Expr, time.Now()); err == nil {
			split.Common[i].Expr = filter.And(e).String()
		}
	}
	return split
}

// writeCauses writes the groups for a reader: count, share, label, and the expression under
// it, then what every letter has in common and how to act on a group.
func writeCauses(w io.Writer, res *dlqops.ScanResult, sub, filter string, split dlqops.CauseSplit) {
	of := termtext.Line(shortTopic(res.Topic))
	if sub != "" {
		of += " (subscription " + termtext.Line(sub) + ")"
	}
	if filter != "" {
		of += " selected by " + termtext.Line(filter)
	}
	if split.Letters == 0 {
		fmt.Fprintf(w, "no letters in %s: nothing to split\n", of)
		return
	}
	fmt.Fprintf(w, "%s in %s, %s:\n", plural(split.Letters, "letter"), of, plural(int64(len(split.Groups)), "cause"))
	if res.Approx != "" {
		fmt.Fprintf(w, "≈ %s\n", res.Approx)
	}
	width := len(fmt.Sprint(split.Letters))
	share := func(n int64) float64 { return float64(n) * 100 / float64(split.Letters) }
	for _, g := range split.Groups {
		fmt.Fprintf(w, "\n  %*d  %5.1f%%  %s\n", width, g.Letters, share(g.Letters), termtext.Line(g.Label))
		fmt.Fprintf(w, "  %*s          %s\n", width, "", termtext.Line(g.Expr))
	}
	if split.Rest.Letters > 0 {
		fmt.Fprintf(w, "\n  %*d  %5.1f%%  rest: none of the above\n", width, split.Rest.Letters, share(split.Rest.Letters))
		fmt.Fprintf(w, "  %*s          %s\n", width, "", termtext.Line(split.Rest.Expr))
	}
	if len(split.Common) > 0 {
		fmt.Fprintln(w, "\nin common")
		for _, c := range split.Common {
			fmt.Fprintf(w, "  %*d  %5.1f%%  %s\n", width, c.Letters, share(c.Letters), termtext.Line(c.Value))
		}
	}
	if len(split.Groups) > 0 {
		dlq := termtext.Line(shortTopic(res.Topic))
		fmt.Fprintf(w, "\nact on a group: letterbox dlq discard %s --filter 'EXPR', or letterbox replay --dlq %s --filter 'EXPR'\n", dlq, dlq)
	}
}
