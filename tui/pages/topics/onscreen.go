package topics

// Details for the rows on screen. A listing comes with the stats the cluster gives in one call
// (broker-stats); the topics it leaves without — topics no broker has loaded, a cluster
// without that call, and every topic of a listing of more than data.OnScreenFrom — are asked
// for when they are on screen, one request at a time for the rows shown (data.RowDetails). A
// listing that large is read again every listEvery instead of every refresh; in between, a
// refresh asks for the rows on screen only.

import (
	"runtime/debug"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// DetailsMsg carries the details of rows on screen (data.RowDetails): between the listings of
// a large cluster, the refresh's answer, so it is news from the cluster.
type DetailsMsg struct {
	common.Fresh
	NS   string
	Rows map[string]data.TopicRow
}

const (
	// listEvery is how often a listing of more than data.OnScreenFrom topics is read again: a
	// topic created meanwhile shows within a minute (at once with a forced refresh).
	listEvery = time.Minute
	// askedFresh is how long a row's details, once asked, are not asked again on their own
	// (a refresh asks again for every row on screen).
	askedFresh = 5 * time.Second
)

// onScreen is what the page asked for its rows on screen.
type onScreen struct {
	asking   bool                 // a request is out
	askAgain bool                 // the rows on screen changed meanwhile
	asked    map[string]time.Time // when each row was last asked for
}

// releaseListing hands back to the system the memory of the listing a large one replaced:
// the runtime would keep it for the next (100,000 topics: 100 MB held between listings a
// minute apart). A collection of the live listing, off the event loop.
func releaseListing() tea.Msg {
	debug.FreeOSMemory()
	return nil
}

// listedRecently reports a listing too large to read again on every refresh, read less than
// listEvery ago.
func (p *Page) listedRecently() bool {
	return len(p.rows) > data.OnScreenFrom && p.c.Clock.Now().Sub(p.loadedAt) < listEvery
}

// askOnScreen asks for the details of the topics on screen that have no stats, or, with
// refresh, of every topic on screen; nil when there is none to ask for. One request at a time:
// what changes meanwhile is asked for when it returns.
func (p *Page) askOnScreen(refresh bool) tea.Cmd {
	if p.asking {
		p.askAgain = true
		return nil
	}
	now := p.c.Clock.Now()
	if p.asked == nil {
		p.asked = map[string]time.Time{}
	}
	var names []string
	from, to := p.tbl.Visible()
	for _, s := range p.shown[from:to] {
		r := s.topic
		if r == nil || r.StatsStale {
			continue
		}
		if !refresh && (r.StatsKnown || now.Sub(p.asked[r.Name]) < askedFresh) {
			continue
		}
		names = append(names, r.Name)
		p.asked[r.Name] = now
	}
	if len(names) == 0 {
		return nil
	}
	p.asking = true
	ns := p.ns
	return common.Load(p.c, "topic stats", func(ctx contextT, s data.Source) (DetailsMsg, error) {
		rows, err := s.RowDetails(ctx, names)
		return DetailsMsg{NS: ns, Rows: rows}, err
	}, func(m DetailsMsg) tea.Msg { return m })
}

// merge sets the stats and verdicts of the rows msg carries, sorts again when the sort is by a
// number, and asks for what changed on screen meanwhile.
func (p *Page) merge(msg DetailsMsg) tea.Cmd {
	p.asking = false
	if msg.NS != p.ns {
		return nil
	}
	for name, d := range msg.Rows {
		i, ok := p.byName.find(p.rows, name)
		if !ok {
			continue
		}
		r := &p.rows[i]
		r.Stats, r.StatsKnown, r.Verdict = d.Stats, d.StatsKnown, d.Verdict
		for _, k := range p.children[name] {
			p.rows[k].Verdict = d.Verdict
		}
	}
	if p.sortBy != 0 && len(msg.Rows) > 0 {
		p.resort()
	}
	if p.askAgain {
		p.askAgain = false
		return p.askOnScreen(false)
	}
	return nil
}
