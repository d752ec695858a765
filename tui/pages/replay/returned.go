package replay

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// A replayed letter that fails again comes back to the DLQ carrying REPLAYED_FROM, the id it
// had there: the letters of the DLQ published since the run started that name a letter the
// run moved are the run's returns. They are counted after the run and at each refresh, so a
// replay that "completed" but whose letters all died again says so.

// returnsReadLimit bounds the letters read per count: past it the count says "at least".
const returnsReadLimit = 5000

// ReturnedMsg counts the letters a run moved that are back in the DLQ.
type ReturnedMsg struct {
	common.Fresh
	Run int
	N   int
	// AtLeast: more letters arrived since the run than one count reads.
	AtLeast bool
}

// returns is what the screen knows of a finished run's returns.
type returns struct {
	moved   map[string]bool // the ids of the letters the run moved, as REPLAYED_FROM writes them
	reading bool
	known   bool
	ReturnedMsg
}

// noteMoved keeps the id of a letter the run moved.
func (r *returns) noteMoved(ev data.ReplayEvent) {
	if ev.Action != dlqops.Moved {
		return
	}
	if r.moved == nil {
		r.moved = map[string]bool{}
	}
	r.moved[ev.IDString()] = true
}

// readReturns counts the run's returns, unless a count is under way or nothing moved.
func (p *Page) readReturns() tea.Cmd {
	ts, ok := p.c.Source.(data.TriageSource)
	if !ok || p.stage != Done || p.req.Discard || len(p.returns.moved) == 0 || p.returns.reading {
		return nil
	}
	p.returns.reading = true
	ctx, timeout := p.c.Ctx, p.c.Timeout
	// A letter returns after the run started; the margin allows for the broker's clock
	// running behind this machine's (an exact id match decides, the time only bounds the read).
	dlq, since, moved, run := p.req.DLQ, p.started.Add(-5*time.Minute), p.returns.moved, p.run
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		out := ReturnedMsg{Run: run}
		from, read := data.From{Time: since}, 0
		for {
			pg, err := ts.Browse(ctx, dlq, data.View{}, from, 500)
			if err != nil {
				return returnsFailed{run: run} // the next refresh counts again
			}
			for _, m := range pg.Msgs {
				if moved[m.Properties[deadletter.PropertyReplayedFrom]] {
					out.N++
				}
			}
			read += len(pg.Msgs)
			if !pg.More || len(pg.Msgs) == 0 {
				return out
			}
			if read >= returnsReadLimit {
				out.AtLeast = true
				return out
			}
			from = pg.Next
		}
	}
}

// returnsFailed says a count could not be read.
type returnsFailed struct{ run int }

// returnsLine words the count: "3 of 5 moved letters returned to the DLQ since the run".
func (p *Page) returnsLine() string {
	st := p.c.Styles
	r := p.returns
	switch {
	case len(r.moved) == 0:
		return ""
	case !r.known:
		return st.Paint(&st.Subtle, "counting the moved letters that returned to the DLQ…")
	case r.N == 0:
		what := fmt.Sprintf("none of the %d moved letters has", len(r.moved))
		if len(r.moved) == 1 {
			what = "the moved letter has not"
		}
		return st.Paint(&st.OK, common.Trunc(what+" returned to the DLQ (counted at each refresh)", p.w))
	}
	n := fmt.Sprint(r.N)
	if r.AtLeast {
		n = "at least " + n
	}
	return st.Paint(&st.Warn, common.Trunc(fmt.Sprintf("%s of %s returned to the DLQ since the run: %s failed again (REPLAYED_FROM names %s)", n, common.Plural(len(r.moved), "moved letter"), common.Agree(r.N, "it", "they"), common.Agree(r.N, "it", "them")), p.w))
}
