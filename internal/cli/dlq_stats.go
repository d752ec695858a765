package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/dlqops"
)

// statsFlags are the flags of "letterbox dlq stats".
type statsFlags struct {
	subscription string
	filters      filterList
	by           facetList
	includeAcked bool
	json         bool
}

func (f *statsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.subscription, "subscription", "", "count the letters subscription `S` has not acknowledged (default: the DLQ's main subscription)")
	fs.Var(&f.filters, "filter", filterHelp)
	fs.Var(&f.by, "by", "also count the letters by `FACET` (repeatable): "+strings.Join(dlqops.FacetNames(), ", ")+", property.NAME or json.NAME")
	fs.BoolVar(&f.includeAcked, "include-acknowledged", false, "count the letters the subscription acknowledged too, while the DLQ retains them")
	fs.BoolVar(&f.json, "json", false, "write the counts as one JSON object to stdout")
}

var dlqStats = dlqSub{cmd: "letterbox dlq stats", flags: []string{"subscription", "filter", "by", "include-acknowledged", "json"},
	usage: `Usage: letterbox dlq stats DLQ [--subscription S] [--filter EXPR]... [--by FACET]... [--include-acknowledged]
                           [--json] [client flags]

Reads the letters of DLQ (orders-DLQ, tenant/ns/x or a full name) that its subscription has
not acknowledged, up to the last one the DLQ held when the command started, and counts those
the filters select: by reason, by origin topic, by origin subscription, the top keys, per hour
of publication and by RECONSUMETIMES. A letter is a message, each message of a batch one. The
subscription is --subscription, else the DLQ's main one (its only durable subscription,
normally the initial one its dead-letter router made; among several, the one with the largest
backlog); a DLQ without one has every retained letter counted, and the output says so.
--include-acknowledged counts the letters the subscription acknowledged too, while they are
retained, and says how many. --by FACET counts them by any facet as well (see 'letterbox dlq
causes'): the key, the reason, payload.kind (empty, json, not json), payload.decodes (with the
schema the letter was written with), payload.size, producer, schema.version, published.hour,
event.hour, property.NAME or json.NAME (a top-level field of JSON payloads): its top values with
exact counts and the expression that selects each, how many distinct values, how many with one
letter each. Nothing is consumed. With --json, one object: the counts (and facets, one per
--by) plus
topic, subscription (null for none), filter, read (letters read), selected (letters the
filter selected; also letters), acknowledged (how many of them the subscription acknowledged),
include_acknowledged, entries (the entries they came in), approx (why the counts may be off,
when they may), complete and elapsed (seconds). On a terminal, stderr shows the progress.

Flags:
`}

// statsJSON is the output of --json: the scan's ScanStats plus what the scan was.
type statsJSON struct {
	Topic               string  `json:"topic"`
	Subscription        *string `json:"subscription"`
	Filter              string  `json:"filter"`
	Read                int64   `json:"read"`
	Selected            int64   `json:"selected"`
	Acknowledged        int64   `json:"acknowledged"`
	IncludeAcknowledged bool    `json:"include_acknowledged"`
	Entries             int64   `json:"entries"`
	Approx              string  `json:"approx,omitempty"`
	Complete            bool    `json:"complete"`
	Elapsed             float64 `json:"elapsed"` // seconds
	// Facets are the --by facets, in the order asked.
	Facets []dlqops.FacetSummary `json:"facets,omitempty"`
	dlqops.ScanStats
	// These shadow ScanStats' fields of the same names: null rather than year 1 without letters.
	First *time.Time `json:"first_published"`
	Last  *time.Time `json:"last_published"`
}

func runDLQStats(ctx context.Context, cf *clientFlags, _ stdin, args []string, stdout, stderr io.Writer) int {
	var f statsFlags
	pos, code, ok := dlqStats.parse(cf, args, f.register, stdout, stderr)
	if !ok {
		return code
	}
	if code := oneDLQ(dlqStats.cmd, pos, stderr); code != ExitOK {
		return code
	}
	filter, err := parseFilters(f.filters, time.Now())
	if err != nil {
		return filterError(stderr, dlqStats.cmd, err)
	}
	ad, cl, topic, code := openDLQ(ctx, cf, dlqStats.cmd, pos[0], stderr)
	if code != ExitOK {
		return code
	}
	defer cl.Close()
	sub, code := readSubscription(ctx, ad, dlqStats.cmd, topic, f.subscription, f.includeAcked, stderr)
	if code != ExitOK {
		return code
	}
	names := deadletter.NewPropertyNames(filter.Properties())
	res, err := dlqops.Scan(ctx, cl, dlqops.ScanOptions{Topic: topic, Subscription: sub, IncludeAcknowledged: f.includeAcked,
		Filter: filter, NoIndex: true, Facets: len(f.by) > 0, Admin: ad, Progress: scanProgress(stderr), Names: names})
	if err != nil && ctx.Err() == nil {
		return scanFailed(ctx, stderr, dlqStats.cmd, topic, err)
	}
	warnUnseen(stderr, dlqStats.cmd, names)
	var facets []dlqops.FacetSummary
	for _, name := range f.by {
		facets = append(facets, res.Facets.Facet(name))
	}
	// Interrupted: what was counted so far is still worth showing, marked incomplete.
	if f.json {
		out := statsJSON{Topic: topic, Filter: filter.String(), Read: res.Read, Selected: res.Stats.Letters,
			Acknowledged: res.Acknowledged, IncludeAcknowledged: f.includeAcked, Entries: res.Entries, Approx: res.Approx,
			Complete: res.Complete, Elapsed: res.Elapsed.Seconds(), Facets: facets, ScanStats: res.Stats}
		if sub != "" {
			out.Subscription = &sub
		}
		if res.Stats.Letters > 0 {
			out.First, out.Last = &res.Stats.First, &res.Stats.Last
		}
		json.NewEncoder(stdout).Encode(out)
	} else {
		writeStats(stdout, res, filter.String())
		for _, fs := range facets {
			writeFacet(stdout, fs, res.Stats.Letters)
		}
	}
	if err != nil {
		return scanFailed(ctx, stderr, dlqStats.cmd, topic, err)
	}
	return ExitOK
}

// oneDLQ checks that the positional arguments are exactly one DLQ.
func oneDLQ(cmd string, pos []string, stderr io.Writer) int {
	switch {
	case len(pos) == 0:
		return usageError(stderr, cmd, fmt.Errorf("which DLQ? give its name (orders-DLQ, tenant/ns/topic or a full name)"))
	case len(pos) > 1:
		return usageError(stderr, cmd, fmt.Errorf("unexpected argument %q", pos[1]))
	}
	return ExitOK
}
