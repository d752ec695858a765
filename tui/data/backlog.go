package data

import (
	"fmt"
	"strconv"
)

// Backlog is one subscription's backlog as the screens show it: letters (messages, each message
// of a batch one) where the broker counts them, else its entries — a batch of a hundred letters
// being one — which are shown as entries, marked ≈, never as letters.
type Backlog struct {
	Sub         string // "" for none
	N           int64
	EntriesOnly bool // N counts entries: the broker counts no letters (upstream)
}

// Cell is b for a table column of width w (0: any): "36", "12,000", or "≈120 ent" for
// entries.
func (b Backlog) Cell(w int) string {
	if b.EntriesOnly {
		return "≈" + grouped(b.N, max(w-5, 0)) + " ent"
	}
	return grouped(b.N, w)
}

// Words is b in a sentence: "12,000 letters", or "≈ 120 entries (the broker counts no letters)".
func (b Backlog) Words() string {
	if b.EntriesOnly {
		return fmt.Sprintf("≈ %s %s (the broker counts entries, not letters)", grouped(b.N, 0), plural(b.N, "entry", "entries"))
	}
	return Letters(b.N)
}

// Letters is n letters in a sentence, exact: "1 letter", "12,000 letters".
func Letters(n int64) string { return grouped(n, 0) + " " + plural(n, "letter", "letters") }

// Grouped writes n with thousands separators: 12,000.
func Grouped(n int64) string { return grouped(n, 0) }

// grouped writes n with thousands separators when that fits in w characters (w ≤ 0: always),
// else without, else abbreviated (12.3M): an exact number wherever there is room for one.
func grouped(n int64, w int) string {
	plain := strconv.FormatInt(n, 10)
	var s []byte
	for i, c := range []byte(plain) {
		if i > 0 && (len(plain)-i)%3 == 0 && c != '-' && plain[i-1] != '-' {
			s = append(s, ',')
		}
		s = append(s, c)
	}
	switch {
	case w <= 0 || len(s) <= w:
		return string(s)
	case len(plain) <= w:
		return plain
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
