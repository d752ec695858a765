package cli

import (
	"fmt"
	"strconv"

	"github.com/letterbox-dev/letterbox/client/dlqops"
)

// How the dlq commands write a count. A count is of letters — messages, each message of a batch
// one — for one subscription; where the broker counts only entries (upstream's msgBacklog, a
// batch of a hundred letters being one) and nothing has read the letters yet, the entries are
// shown as such, marked "≈": never as letters.

// lettersCell is a subscription's letters as a table shows them: the number, "≈ N entries"
// where the broker counts no letters, "-" without a subscription.
func lettersCell(letters *int64, entries int64, sub string) string {
	switch {
	case sub == "":
		return "-"
	case letters != nil:
		return strconv.FormatInt(*letters, 10)
	}
	return fmt.Sprintf("≈ %d entries", entries)
}

// backlogWords is a subscription's backlog in words, for questions and summaries: "1200
// letters", or "≈ 12 entries (the broker counts no letters; a batch is one entry)".
func backlogWords(b dlqops.Backlog) string {
	if b.LettersKnown {
		return plural(b.Letters, "letter")
	}
	return fmt.Sprintf("≈ %s (the broker counts no letters; a batch of letters is one entry)", plural(b.Entries, "entry"))
}

// plural is "1 letter", "2 letters", "1 entry", "3 entries".
func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if what == "entry" {
		return strconv.FormatInt(n, 10) + " entries"
	}
	return strconv.FormatInt(n, 10) + " " + what + "s"
}

// lettersOf is the backlog's letters for JSON: nil where the broker does not count them.
func lettersOf(b dlqops.Backlog) *int64 {
	if !b.LettersKnown {
		return nil
	}
	n := b.Letters
	return &n
}
