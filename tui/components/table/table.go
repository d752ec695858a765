// Package table is a virtualised table: it renders only the rows on screen, so a namespace of
// 10,000 topics costs what 40 rows cost. Sorting and filtering belong to the page, which owns
// the data; the table owns the cursor, the scroll offset and the column layout.
package table

import (
	"slices"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/letterbox-dev/letterbox/client/termtext"
	"github.com/letterbox-dev/letterbox/tui/common"
)

// Column describes one column. Exactly one column should be Flex: it takes the width the others
// leave. Droppable columns are hidden, rightmost first, when the flex column would get less
// than its Min.
type Column struct {
	Title     string
	Width     int
	Right     bool
	Flex      bool
	Min       int
	Droppable bool
	// Max, on the flex column, caps its width (its content's widest, set by the page): a
	// wide terminal leaves the room after the last column rather than inside a name.
	Max int
}

// Row is one row: plain cells (control characters are shown escaped), and optionally a style per cell (cells past len(Styles) take
// the text style). The selected row is drawn plain in the selection style, so colours never fight.
type Row struct {
	Cells  []string
	Styles []*lipgloss.Style
}

// Model is the table.
type Model struct {
	c       *common.Common
	cols    []Column
	n       int
	row     func(i int) Row
	cursor  int
	offset  int
	width   int
	height  int
	focused bool
	// SortCol and SortDesc only draw the arrow in the header; the page sorts.
	SortCol  int
	SortDesc bool
}

// New returns an empty, focused table.
func New(c *common.Common, cols []Column) Model {
	return Model{c: c, cols: cols, focused: true, SortCol: -1}
}

func (m *Model) SetSize(w, h int)      { m.width, m.height = w, h; m.clamp() }
func (m *Model) Focus(v bool)          { m.focused = v }
func (m Model) Focused() bool          { return m.focused }
func (m Model) Cursor() int            { return m.cursor }
func (m Model) Len() int               { return m.n }
func (m Model) Width() int             { return m.width }
func (m Model) Height() int            { return m.height }
func (m *Model) SetColumns(c []Column) { m.cols = c }

// SetFlexMax caps the flex column at w cells (0: no cap); see Column.Max.
func (m *Model) SetFlexMax(w int) {
	m.cols = slices.Clone(m.cols)
	for i := range m.cols {
		if m.cols[i].Flex {
			m.cols[i].Max = w
		}
	}
}

// SetRows replaces the rows, keeping the cursor where it was (clamped).
func (m *Model) SetRows(rows []Row) {
	m.SetRowFunc(len(rows), func(i int) Row { return rows[i] })
}

// SetRowFunc sets n rows built on demand by row: only the rows on screen are ever built,
// which is what keeps a refresh of 10,000 topics cheap.
func (m *Model) SetRowFunc(n int, row func(i int) Row) { m.n, m.row = n, row; m.clamp() }

// SetCursor moves the cursor to i and scrolls it into view.
func (m *Model) SetCursor(i int) { m.cursor = i; m.clamp() }

func (m *Model) Move(delta int) { m.SetCursor(m.cursor + delta) }
func (m *Model) Top()           { m.SetCursor(0) }
func (m *Model) Bottom()        { m.SetCursor(m.n - 1) }
func (m *Model) PageDown()      { m.Move(max(1, m.bodyHeight()-1)) }
func (m *Model) PageUp()        { m.Move(-max(1, m.bodyHeight()-1)) }
func (m *Model) HalfDown()      { m.Move(max(1, m.bodyHeight()/2)) }
func (m *Model) HalfUp()        { m.Move(-max(1, m.bodyHeight()/2)) }

// Visible is the range of rows on screen, [from, to).
func (m Model) Visible() (from, to int) { return m.offset, min(m.n, m.offset+m.bodyHeight()) }

// RowAt returns the row index at line y of the table's view (0 is the header), or -1.
func (m Model) RowAt(y int) int {
	i := m.offset + y - 1
	if y < 1 || i >= m.n {
		return -1
	}
	return i
}

func (m Model) bodyHeight() int { return max(0, m.height-1) }

func (m *Model) clamp() {
	if m.cursor >= m.n {
		m.cursor = m.n - 1
	}
	if m.cursor < 0 {
		m.cursor = 0
	}
	h := m.bodyHeight()
	if m.cursor < m.offset {
		m.offset = m.cursor
	}
	if h > 0 && m.cursor >= m.offset+h {
		m.offset = m.cursor - h + 1
	}
	if m.offset > max(0, m.n-h) {
		m.offset = max(0, m.n-h)
	}
}

// width is column i's width: as wide as its title, the sort arrow included, so that a header
// is never cut (BACKLOG↓ in a column of 7).
func (m Model) colWidth(i int) int {
	need := ansi.StringWidth(m.cols[i].Title)
	if i == m.SortCol {
		need++
	}
	return max(m.cols[i].Width, need)
}

// layout returns the visible columns' indexes and widths.
func (m Model) layout() ([]int, []int) {
	visible := make([]bool, len(m.cols))
	for i := range visible {
		visible[i] = true
	}
	for {
		fixed, flex, n := 0, -1, 0
		for i, c := range m.cols {
			if !visible[i] {
				continue
			}
			n++
			if c.Flex {
				flex = i
			} else {
				fixed += m.colWidth(i)
			}
		}
		rest := m.width - fixed - (n - 1)
		if flex < 0 || rest >= m.cols[flex].Min {
			var idx, ws []int
			for i, c := range m.cols {
				if !visible[i] {
					continue
				}
				w := m.colWidth(i)
				if c.Flex {
					w = max(1, rest)
					if c.Max > 0 {
						w = max(1, min(w, max(c.Max, c.Min, ansi.StringWidth(c.Title))))
					}
				}
				idx, ws = append(idx, i), append(ws, w)
			}
			return idx, ws
		}
		dropped := false
		for i := len(m.cols) - 1; i >= 0; i-- {
			if visible[i] && m.cols[i].Droppable {
				visible[i], dropped = false, true
				break
			}
		}
		if !dropped {
			visible[flex] = true
			rest = max(1, rest)
			var idx, ws []int
			for i, c := range m.cols {
				if visible[i] {
					w := m.colWidth(i)
					if c.Flex {
						w = rest
					}
					idx, ws = append(idx, i), append(ws, w)
				}
			}
			return idx, ws
		}
	}
}

// View renders the header and the visible rows, exactly height lines of width cells.
func (m Model) View() string {
	if m.width <= 0 || m.height <= 0 {
		return ""
	}
	st := m.c.Styles
	idx, ws := m.layout()
	var b strings.Builder
	var hdr []string
	for k, i := range idx {
		t := m.cols[i].Title
		if i == m.SortCol {
			if m.SortDesc {
				t += "↓"
			} else {
				t += "↑"
			}
		}
		hdr = append(hdr, common.Pad(t, ws[k], m.cols[i].Right))
	}
	b.WriteString(st.Paint(&st.ColHeader, common.Pad(strings.Join(hdr, " "), m.width, false)))
	end := min(m.n, m.offset+m.bodyHeight())
	for r := m.offset; r < end; r++ {
		b.WriteByte('\n')
		row := m.row(r)
		if r == m.cursor {
			var cells []string
			for k, i := range idx {
				cells = append(cells, common.Pad(cell(row, i), ws[k], m.cols[i].Right))
			}
			sel := &st.SelectedDim
			if m.focused {
				sel = &st.Selected
			}
			b.WriteString(st.Paint(sel, common.Pad(strings.Join(cells, " "), m.width, false)))
			continue
		}
		line := 0
		for k, i := range idx {
			if k > 0 {
				b.WriteByte(' ')
				line++
			}
			s := common.Pad(cell(row, i), ws[k], m.cols[i].Right)
			style := &st.Text
			if i < len(row.Styles) && row.Styles[i] != nil {
				style = row.Styles[i]
			}
			b.WriteString(st.Paint(style, s))
			line += ws[k]
		}
		if line < m.width {
			b.WriteString(strings.Repeat(" ", m.width-line))
		}
	}
	for n := end - m.offset; n < m.bodyHeight(); n++ {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat(" ", m.width))
	}
	return b.String()
}

// cell is the text of cell i. Cells are plain text, often a stranger's (a letter's key, a
// reason, a payload): what a terminal would act on is written visibly instead (client/termtext).
func cell(r Row, i int) string {
	if i < len(r.Cells) {
		return termtext.Line(r.Cells[i])
	}
	return ""
}
