package table

import (
	"testing"

	"github.com/letterbox-dev/letterbox/themes"
	"github.com/letterbox-dev/letterbox/tui/common"
)

func TestLayout(t *testing.T) {
	c := &common.Common{}
	c.SetTheme(themes.Builtin()[0])
	cols := []Column{
		{Title: "NAME", Flex: true, Min: 8},
		{Title: "A", Width: 10},
		{Title: "B", Width: 10, Droppable: true},
		{Title: "C", Width: 10, Droppable: true},
	}
	for _, tc := range []struct {
		width, max int
		want       []int // the widths of the columns shown, in order
	}{
		{width: 80, want: []int{47, 10, 10, 10}},
		{width: 80, max: 20, want: []int{20, 10, 10, 10}},
		{width: 40, want: []int{18, 10, 10}},            // C goes first
		{width: 25, want: []int{14, 10}},                // then B
		{width: 10, want: []int{1, 10}},                 // nothing left to drop: the flex column shrinks
		{width: 80, max: 2, want: []int{8, 10, 10, 10}}, // never under its Min
	} {
		m := New(c, cols)
		m.SetFlexMax(tc.max)
		m.SetSize(tc.width, 5)
		_, ws := m.layout()
		if len(ws) != len(tc.want) {
			t.Errorf("width %d max %d: widths %v, want %v", tc.width, tc.max, ws, tc.want)
			continue
		}
		for i := range ws {
			if ws[i] != tc.want[i] {
				t.Errorf("width %d max %d: widths %v, want %v", tc.width, tc.max, ws, tc.want)
				break
			}
		}
	}
}
