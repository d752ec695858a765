package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// The breadcrumb trail in the header, fitted to the cells it has. Where you are (the last
// crumb) matters more than how you got there, so it is kept whole as long as it fits at all;
// the crumbs before it give way from the left, cut only where a word or a path element begins,
// never in the middle of one ("…orders-billing-DLQ › resend 7:1:-1", not "…ard public/…"),
// and "… " stands for the crumbs left out whole.

const crumbSep = " › "

// trailNeed is the fewest cells in which the trail can still show its last crumb whole: the
// whole trail when it is short, otherwise "… " and the last crumb.
func trailNeed(crumbs []string) int {
	if len(crumbs) == 0 {
		return 0
	}
	full := ansi.StringWidth(strings.Join(crumbs, crumbSep))
	if len(crumbs) == 1 {
		return full
	}
	return min(full, ansi.StringWidth("… "+crumbs[len(crumbs)-1]))
}

// fitTrail joins crumbs with " › " in at most w cells.
func fitTrail(crumbs []string, w int) string {
	if len(crumbs) == 0 || w <= 0 {
		return ""
	}
	full := strings.Join(crumbs, crumbSep)
	if ansi.StringWidth(full) <= w {
		return full
	}
	last := crumbs[len(crumbs)-1]
	lastW := ansi.StringWidth(last)
	if len(crumbs) > 1 {
		before := strings.Join(crumbs[:len(crumbs)-1], crumbSep) + crumbSep
		if tail := boundaryTail(before, w-lastW-1); tail != "" {
			return "…" + tail + last
		}
		if lastW+ansi.StringWidth("… ") <= w {
			return "… " + last
		}
	}
	return middleCut(last, w)
}

// boundaryTail is the longest end of s, at most w cells, that begins where a word or a path
// element does (after a space or a slash), or "" when no such end fits.
func boundaryTail(s string, w int) string {
	if w <= 0 {
		return ""
	}
	for i := 1; i < len(s); i++ {
		if c := s[i-1]; c != ' ' && c != '/' {
			continue
		}
		if tail := s[i:]; ansi.StringWidth(tail) <= w {
			if strings.HasPrefix(tail, "› ") {
				return "" // the cut fell on a separator: "… last" says as much in fewer cells
			}
			return tail
		}
	}
	return ""
}

// middleCut shortens s to w cells by taking out its middle: a name's start and its end are
// what tell it apart ("Discard public/de…-billing-DLQ").
func middleCut(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	if w <= 1 {
		return ansi.Truncate(s, w, "")
	}
	head := (w - 1) / 2
	tail := w - 1 - head
	return ansi.Truncate(s, head, "") + "…" + ansi.TruncateLeft(s, ansi.StringWidth(s)-tail, "")
}
