package topics

// The rows of the screen, kept so that a keystroke of the filter does not sort 100,000 topics
// again: a listing is indexed once (names, partitions, the folded text the filter reads, the
// width of each name), sorted when it arrives or the sort changes, and filtered in sorted
// order; typing on narrows the last filter's matches, as a fuzzy pattern that grows can only
// match fewer, and a backspace goes back to the matches it had.

import (
	"cmp"
	"slices"
	"strings"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/filter"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// rowIndex is the page's rows indexed.
type rowIndex struct {
	byName   nameIndex        // row by full name
	children map[string][]int // partitions' rows, by their partitioned topic's name, in order
	folded   []string         // each row's "namespace/local", folded for the filter
	nameW    []int            // each row's NAME cell width
	nsID     []int            // each row's namespace, numbered: cheaper to compare than names
	sorted   []int            // the topics' rows (partitions not), in display order
	steps    []filterStep     // the filter's matches, for each pattern typed in turn
}

// filterStep is the rows of sorted a pattern matches, in order.
type filterStep struct {
	pattern string
	rows    []int
}

// shortOf is r's "namespace/local": the end of its full name when the name holds it, as a
// listing's names do, rather than a copy of it for each of 100,000 rows.
func shortOf(r *data.TopicRow) string {
	_, tail, ok := strings.Cut(r.Name, "://")
	if ok && len(tail) == len(r.Namespace)+1+len(r.Local) && strings.HasPrefix(tail, r.Namespace) &&
		tail[len(r.Namespace)] == '/' && strings.HasSuffix(tail, r.Local) {
		return tail
	}
	return r.Namespace + "/" + r.Local
}

// reindex indexes a new listing, then sorts, filters and lays it out, keeping the cursor on
// the same topic when it is still shown.
func (p *Page) reindex() {
	n := len(p.rows)
	ix := &p.rowIndex
	ix.byName.index(p.rows)
	ix.children = map[string][]int{}
	ix.folded = make([]string, n)
	ix.nameW = make([]int, n)
	ix.nsID = make([]int, n)
	nsIDs := map[string]int{}
	for i := range p.rows {
		r := &p.rows[i]
		id, ok := nsIDs[r.Namespace]
		if !ok {
			id = len(nsIDs)
			nsIDs[r.Namespace] = id
		}
		ix.nsID[i] = id
		ix.folded[i] = filter.Fold(shortOf(r))
		ix.nameW[i] = common.Width(p.nameCell(r))
		if r.Parent != "" {
			ix.children[r.Parent] = append(ix.children[r.Parent], i)
		}
	}
	for _, kids := range ix.children {
		slices.SortFunc(kids, func(a, b int) int {
			ia := naming.PartitionIndex(p.rows[a].Local)
			ib := naming.PartitionIndex(p.rows[b].Local)
			return cmp.Compare(ia, ib)
		})
	}
	p.resort()
}

// resort sorts the topics by namespace, then the sort key, then name, and filters again.
func (p *Page) resort() {
	ix := &p.rowIndex
	if ix.sorted == nil {
		ix.sorted = make([]int, 0, len(p.rows))
	}
	ix.sorted = ix.sorted[:0]
	for i := range p.rows {
		if p.rows[i].Parent == "" {
			ix.sorted = append(ix.sorted, i)
		}
	}
	slices.SortStableFunc(ix.sorted, func(ai, bi int) int {
		a, b := &p.rows[ai], &p.rows[bi]
		if c := cmp.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		// By a number, the topics whose numbers are read come first, either way round: a
		// large listing comes without them, and a row without is not a zero.
		if p.sortBy != 0 && a.StatsKnown != b.StatsKnown {
			if a.StatsKnown {
				return -1
			}
			return 1
		}
		c := p.compare(a, b)
		if p.desc {
			c = -c
		}
		if c == 0 {
			c = cmp.Compare(a.Local, b.Local)
		}
		return c
	})
	ix.steps = ix.steps[:0]
	p.refilter()
}

// refilter applies the filter's pattern, starting from the matches of the longest pattern it
// extends, and lays the rows out.
func (p *Page) refilter() {
	ix := &p.rowIndex
	pattern := filter.Fold(strings.TrimSpace(p.filter.Value()))
	for len(ix.steps) > 0 && !strings.HasPrefix(pattern, ix.steps[len(ix.steps)-1].pattern) {
		ix.steps = ix.steps[:len(ix.steps)-1]
	}
	from := ix.sorted
	if k := len(ix.steps); k > 0 {
		from = ix.steps[k-1].rows
		if ix.steps[k-1].pattern == pattern {
			p.layout()
			return
		}
	}
	if pattern != "" {
		rows := make([]int, 0, len(from))
		for _, i := range from {
			if filter.InOrder(pattern, ix.folded[i]) {
				rows = append(rows, i)
			}
		}
		ix.steps = append(ix.steps, filterStep{pattern: pattern, rows: rows})
	}
	p.layout()
}

// matched is the topics the filter lets through, in display order.
func (p *Page) matched() []int {
	if k := len(p.steps); k > 0 {
		return p.steps[k-1].rows
	}
	return p.sorted
}

// layout groups the matched topics into table lines under their namespaces, with the
// partitions of expanded topics, keeping the cursor on the same topic when it is still shown.
func (p *Page) layout() {
	keep, at := -1, -1 // the selected topic's row, and its line
	if name := p.Selected(); name != "" {
		if i, ok := p.byName.find(p.rows, name); ok {
			keep = i
		}
	}
	if lines := len(p.matched()) + len(p.namespaces); cap(p.shown) < lines {
		p.shown = make([]shownRow, 0, lines) // at once, rather than grown from nothing
	}
	p.shown = p.shown[:0]
	p.count = 0
	widest := 0
	lastNS := -1
	for _, i := range p.matched() {
		r := &p.rows[i]
		if p.ns == "" && p.nsID[i] != lastNS {
			p.shown = append(p.shown, shownRow{ns: r.Namespace})
			widest = max(widest, common.Width(r.Namespace)+1)
			lastNS = p.nsID[i]
		}
		if i == keep {
			at = len(p.shown)
		}
		p.shown = append(p.shown, shownRow{topic: r})
		p.count++
		widest = max(widest, p.nameW[i])
		if r.Partitions > 0 && p.expanded[r.Name] {
			for _, k := range p.children[r.Name] {
				if k == keep {
					at = len(p.shown)
				}
				p.shown = append(p.shown, shownRow{topic: &p.rows[k]})
				widest = max(widest, p.nameW[k])
			}
		}
	}
	p.tbl.SortCol, p.tbl.SortDesc = sortCols[p.sortBy], p.desc
	p.tbl.SetRowFunc(len(p.shown), p.tableRow)
	// The name column is as wide as the longest name, so that the numbers stay beside it.
	p.tbl.SetFlexMax(widest + 1)
	if at >= 0 {
		p.tbl.SetCursor(at)
	}
}
