package triage

import (
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
)

// facetFeed counts a scan's letters' facets on a goroutine of its own, which the scan starts
// and stops (close). The scan's goroutine spends its time waiting for the reader's next
// letter and reading the letter; counting facets there too made every letter wait for them,
// whereas beside it they take a core the scan leaves idle. Letters go over in batches, so
// that a hand-over costs nothing next to the letters in it; at most feedBatches wait (the
// scan waits for the counting past that): counting is much quicker than reading, so a few
// suffice, and each letter waiting keeps its message (a frame) alive. A letter's message is
// not changed once received, so both goroutines may read it.
type facetFeed struct {
	f     *Facets
	batch []fedLetter
	full  chan []fedLetter // batches to count
	free  chan []fedLetter // batches counted, for reuse
	done  chan struct{}    // closed once every batch is counted
}

type fedLetter struct {
	m *client.Message
	l deadletter.Letter
	d Decoded
}

const (
	feedBatch   = 128
	feedBatches = 2
)

func startFacetFeed(f *Facets) *facetFeed {
	ff := &facetFeed{f: f, full: make(chan []fedLetter, feedBatches), free: make(chan []fedLetter, feedBatches+1),
		done: make(chan struct{})}
	go ff.count()
	return ff
}

func (ff *facetFeed) count() {
	defer close(ff.done)
	for b := range ff.full {
		for i := range b {
			ff.f.Add(b[i].m, &b[i].l, b[i].d)
			b[i] = fedLetter{} // the message is not kept past its counting
		}
		select {
		case ff.free <- b[:0]:
		default:
		}
	}
}

// add hands letter m over to be counted.
func (ff *facetFeed) add(m *client.Message, l *deadletter.Letter, d Decoded) {
	if ff.batch == nil {
		select {
		case ff.batch = <-ff.free:
		default:
			ff.batch = make([]fedLetter, 0, feedBatch)
		}
	}
	ff.batch = append(ff.batch, fedLetter{m: m, l: *l, d: d})
	if len(ff.batch) == feedBatch {
		ff.full <- ff.batch
		ff.batch = nil
	}
}

// close hands over the last letters and returns once every letter is counted: the facets are
// then the caller's again.
func (ff *facetFeed) close() {
	if len(ff.batch) > 0 {
		ff.full <- ff.batch
	}
	ff.batch = nil
	close(ff.full)
	<-ff.done
}
