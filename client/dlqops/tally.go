package dlqops

import (
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// Tally counts letters as a scan counts them (its stats and facets), for a source that reads
// the letters its own way: the TUI's fake data source, whose counts must be a real scan's.
type Tally struct {
	stats  *triage.Tally
	facets *triage.Facets
}

// NewTally is a tally of no letter.
func NewTally() *Tally { return &Tally{stats: triage.NewTally(), facets: triage.NewFacets()} }

// Add counts m as a letter. It knows no schemas: every payload decodes, as a schemaless
// topic's does.
func (t *Tally) Add(m *client.Message) {
	l := deadletter.Read(m.Properties, m.ProducerName)
	t.stats.Add(m.Key, m.PublishTime, &l)
	t.facets.Add(m, &l, triage.Decoded{})
}

// Stats are the counts of the letters added.
func (t *Tally) Stats() ScanStats { return t.stats.Stats() }

// Facets are the facets of the letters added.
func (t *Tally) Facets() *Facets { return t.facets }
