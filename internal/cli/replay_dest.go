package cli

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/termtext"
)

// Where a replay sends letters, said before and after: a letter's REAL_TOPIC is a stranger's
// word, and a replay publishes with the operator's credentials. The text --dry-run lists each
// destination with its count; a destination in another tenant than the DLQ's is refused
// unless --allow-cross-tenant (the engine leaves such letters, failed).

// destinations counts the letters of a run by destination: moved (in a dry run: would move),
// and left because the destination is in another tenant.
type destinations map[string]*destCount

type destCount struct{ moved, crossTenant int64 }

func (d destinations) note(ev dlqops.Event) {
	if ev.Destination == "" {
		return
	}
	c := d[ev.Destination]
	if c == nil {
		c = &destCount{}
		d[ev.Destination] = c
	}
	switch {
	case ev.Action == dlqops.Moved || ev.Action == dlqops.WouldMove:
		c.moved++
	case ev.Action == dlqops.Failed && strings.HasPrefix(ev.Reason, dlqops.CrossTenantReason):
		c.crossTenant++
	}
}

// sorted are the destinations, the most letters first.
func (d destinations) sorted() []string {
	names := make([]string, 0, len(d))
	for n := range d {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		ca, cb := d[a].moved+d[a].crossTenant, d[b].moved+d[b].crossTenant
		return cmp.Or(cmp.Compare(cb, ca), strings.Compare(a, b))
	})
	return names
}

// write lists the destinations under a run's summary line.
func (d destinations) write(w io.Writer, dlq string, dryRun bool) {
	if len(d) == 0 {
		return
	}
	head := "moved to"
	if dryRun {
		head = "would move to"
	}
	fmt.Fprintf(w, "%s:\n", head)
	from, _ := dlqops.TenantOf(dlq)
	refused := false
	for _, name := range d.sorted() {
		c := d[name]
		if c.moved > 0 {
			fmt.Fprintf(w, "  %6d  %s\n", c.moved, termtext.Line(shortTopic(name)))
		}
		if c.crossTenant > 0 {
			to, _ := dlqops.TenantOf(name)
			fmt.Fprintf(w, "  %6d  %s  not sent: tenant %s, the DLQ's is %s\n", c.crossTenant, termtext.Line(shortTopic(name)),
				termtext.Line(to), termtext.Line(from))
			refused = true
		}
	}
	if refused {
		io.WriteString(w, "letters for another tenant stay in the DLQ: --allow-cross-tenant sends them there\n")
	}
}

// counts is d as --json writes it: letters moved (or that would move) by destination, and
// letters left for being bound to another tenant.
func (d destinations) counts() (moved, crossTenant map[string]int64) {
	for name, c := range d {
		if c.moved > 0 {
			if moved == nil {
				moved = map[string]int64{}
			}
			moved[name] = c.moved
		}
		if c.crossTenant > 0 {
			if crossTenant == nil {
				crossTenant = map[string]int64{}
			}
			crossTenant[name] = c.crossTenant
		}
	}
	return moved, crossTenant
}

// refuseCrossTenant refuses --to and --destination in another tenant than dlq's without
// --allow-cross-tenant, before anything is read: every letter bound there would be left. The
// flags are named as typed.
func refuseCrossTenant(dlq string, rf *replayFlags) error {
	if rf.crossTenant {
		return nil
	}
	from, _ := dlqops.TenantOf(dlq)
	for flag, dest := range map[string]string{"--to": rf.to, "--destination": rf.destination} {
		if dest == "" {
			continue
		}
		if to, ok := dlqops.TenantOf(dest); !ok || to != from {
			return fmt.Errorf("%s %s is in tenant %s, the DLQ in %s: add --allow-cross-tenant to send letters there", flag, dest, to, from)
		}
	}
	return nil
}
