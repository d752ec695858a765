package dlq

// Which letters the screen reads: a durable subscription's (the DLQ's letters are those its
// durable subscriptions keep), with the ones it acknowledged or without, and starting over
// when that changes.

import (
	"slices"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/tui/data"
)

// nextSubscription shows the letters of the DLQ's next durable subscription: a DLQ's letters
// are kept by its durable subscriptions, and a reader's is not one.
func (p *Page) nextSubscription() tea.Cmd {
	var subs []string
	for _, s := range p.subscriptions() {
		if !s.NonDurable {
			subs = append(subs, s.Name)
		}
	}
	if len(subs) > 1 {
		i := slices.Index(subs, p.sub)
		p.sub = subs[(i+1)%len(subs)]
		return tea.Batch(status("the letters of "+p.sub), p.rebase())
	}
	return status("the DLQ has one durable subscription or none: no other letters to show")
}

// toggleAcked shows the letters the subscription acknowledged too, while the DLQ retains
// them, or hides them again.
func (p *Page) toggleAcked() tea.Cmd {
	if p.sub == "" {
		return status("no subscription: every retained letter is shown already")
	}
	p.includeAcked = !p.includeAcked
	if p.includeAcked {
		return tea.Batch(status("the letters "+p.sub+" acknowledged are shown too, marked ✓, while the DLQ retains them"), p.rebase())
	}
	return tea.Batch(status("the letters of "+p.sub+" only"), p.rebase())
}

// rebase starts over on what the screen reads (another subscription, or the acknowledged
// letters shown or not): counts, search and marks were of the other, and go; the list is read
// from its first letter.
func (p *Page) rebase() tea.Cmd {
	p.scan.stop()
	p.scan.result, p.counts.shown, p.stale, p.drilled = nil, false, false, nil
	p.filter, p.expr = "", nil
	p.marked = map[string]bool{}
	p.tbl.Top()
	if p.includeAcked {
		p.list.src = srcBrowse
		return p.browse(data.From{Earliest: true})
	}
	p.list.src = srcBacklog
	p.list.resetPages()
	return p.loadBacklog(1)
}

// subscriptions are the DLQ's, none before its detail came.
func (p *Page) subscriptions() []data.Subscription {
	if p.detail == nil {
		return nil
	}
	return p.detail.Subscriptions
}
