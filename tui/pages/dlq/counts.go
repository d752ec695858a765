package dlq

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/termtext"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/table"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// countsView lists a scan's breakdowns in one scrolling table: a heading row per breakdown,
// then its buckets. The causes come first (client/triage's split of the letters into the few
// groups that explain them), the facets last. enter on a bucket searches its letters.
type countsView struct {
	shown bool
	tbl   table.Model
	rows  []countRow
}

type countRow struct {
	heading bool
	name    string
	n       int64
	of      int64 // the letters the share is of
	drill   string
}

// countColumns are the counts' columns with the names width wide; a last, empty column takes
// the rest of a wide screen, so that the numbers stay beside their names.
func countColumns(width int) []table.Column {
	return []table.Column{
		{Title: "", Width: width},
		{Title: "LETTERS", Width: 9, Right: true},
		{Title: "SHARE", Width: 6, Right: true},
		{Title: "", Width: barWidth, Droppable: true},
		{Title: "", Flex: true},
	}
}

const barWidth = 24

// setWidth fits the name column to the longest name, within 3/8 of w: a facet's long values
// (a producer's name, a JSON field's) are cut rather than pushing the bars off the screen.
func (c *countsView) setWidth(w int) {
	longest := 16
	for _, r := range c.rows {
		longest = max(longest, common.Width(termtext.Line(r.name))+2) // as the table shows it
	}
	c.tbl.SetColumns(countColumns(max(8, min(longest, max(w*3/8, 24), w-9-6-2))))
}

// set builds the rows of res's stats, led by causes when the scan split them; hours show in
// loc.
func (c *countsView) set(st *common.Styles, res *data.ScanResult, causes *data.CauseSplit, loc *time.Location) {
	s := res.Stats
	c.rows = c.rows[:0]
	section := func(title string) { c.rows = append(c.rows, countRow{heading: true, name: title}) }
	bucket := func(name string, n int64, drill string) {
		c.rows = append(c.rows, countRow{name: name, n: n, of: s.Letters, drill: drill})
	}
	field := func(title, field, none string, counts []dlqops.Count, display func(string) string) {
		section(title)
		for _, b := range counts {
			v, shown := b.Name, display(b.Name)
			if v == none {
				v = ""
			}
			bucket(shown, b.N, field+"="+expr.Quote(v))
		}
	}
	if causes != nil && len(causes.Groups) > 0 {
		section(fmt.Sprintf("CAUSES (%s)", common.Plural(len(causes.Groups), "group")))
		for _, g := range causes.Groups {
			bucket(g.Label, g.Letters, g.Expr)
		}
		if causes.Rest.Letters > 0 {
			bucket("rest: none of the above", causes.Rest.Letters, causes.Rest.Expr)
		}
	}
	same := func(v string) string { return v }
	short := func(v string) string {
		if v == dlqops.NoOrigin {
			return v
		}
		return naming.ShortName(v, "")
	}
	field("BY REASON", "reason", dlqops.NoReason, s.ByReason, same)
	field("BY ORIGIN TOPIC", "origin", dlqops.NoOrigin, s.ByOrigin, short)
	field("BY ORIGIN SUBSCRIPTION", "subscription", dlqops.NoOrigin, s.BySubscription, same)
	field(fmt.Sprintf("TOP KEYS (%s distinct)", common.Count(int64(s.DistinctKeys))), "key", dlqops.NoKey, s.TopKeys, same)
	section("PER HOUR")
	for _, h := range s.ByHour {
		from, to := h.Hour, h.Hour.Add(time.Hour)
		bucket(from.In(loc).Format("2006-01-02 15:04")+"–"+to.In(loc).Format("15:04"), h.N,
			"published>="+from.Format(time.RFC3339)+" and published<"+to.Format(time.RFC3339))
	}
	section("RECONSUME TIMES")
	for _, r := range s.Reconsumes {
		name := fmt.Sprint(r.Times)
		if r.Times < 0 {
			name = "none (died by redelivery)"
		}
		bucket(name, r.N, fmt.Sprintf("reconsumes=%d", r.Times))
	}
	if res.Facets != nil {
		c.facets(res.Facets, s.Letters, section, bucket)
	}
	var max int64
	for _, r := range c.rows {
		if !r.heading && r.n > max {
			max = r.n
		}
	}
	rows := c.rows
	c.tbl.SetRowFunc(len(rows), func(i int) table.Row {
		r := rows[i]
		if r.heading {
			return table.Row{Cells: []string{r.name}, Styles: []*lipgloss.Style{&st.ColHeader}}
		}
		share := "-"
		if r.of > 0 {
			share = fmt.Sprintf("%.1f%%", 100*float64(r.n)/float64(r.of))
		}
		bar := ""
		if max > 0 {
			bar = strings.Repeat("█", int((r.n*barWidth+max-1)/max))
		}
		return table.Row{Cells: []string{"  " + r.name, fmt.Sprint(r.n), share, bar},
			Styles: []*lipgloss.Style{nil, nil, &st.Subtle, &st.DLQ}}
	})
	c.tbl.SetCursor(1)
}

// shownAbove are the facets the sections above count already.
var shownAbove = map[string]bool{dlqops.FacetKey: true, dlqops.FacetReason: true, dlqops.FacetPublished: true}

// facets adds a section per facet the sections above do not show: its listed values, then
// what it does not list, which enter cannot select.
func (c *countsView) facets(f *dlqops.Facets, letters int64, section func(string), bucket func(string, int64, string)) {
	for _, fs := range f.Summary() {
		if shownAbove[fs.Name] || len(fs.Values) == 0 {
			continue
		}
		distinct := common.Count(fs.Distinct)
		if fs.DistinctAtLeast {
			distinct = "≥ " + distinct
		}
		section(fmt.Sprintf("BY %s (%s distinct)", strings.ToUpper(fs.Name), distinct))
		for _, v := range fs.Values {
			bucket(v.Value, v.Letters, v.Expr)
		}
		if fs.Unlisted > 0 {
			bucket("(values not listed)", fs.Unlisted, "")
		}
		for _, e := range fs.Errors {
			bucket("does not decode: "+e.Name, e.N, "")
		}
	}
}

// skipHeader moves the cursor off a heading row, in direction dir.
func (c *countsView) skipHeader(dir int) {
	if !c.shown || len(c.rows) == 0 {
		return
	}
	i := c.tbl.Cursor()
	for i >= 0 && i < len(c.rows) && c.rows[i].heading {
		i += dir
	}
	if i < 0 || i >= len(c.rows) {
		i = c.tbl.Cursor() - dir
	}
	c.tbl.SetCursor(i)
}

// drill is the expression that selects the bucket under the cursor ("" on a heading).
func (c *countsView) drill() string {
	i := c.tbl.Cursor()
	if i < 0 || i >= len(c.rows) || c.rows[i].heading {
		return ""
	}
	return c.rows[i].drill
}
