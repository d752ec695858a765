package common

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/termtext"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// Rate formats msg/s compactly: 0, 0.4, 42.5, 1.2k.
func Rate(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v < 10:
		return fmt.Sprintf("%.1f", v)
	case v < 1000:
		return fmt.Sprintf("%.0f", v)
	case v < 1e6:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.1fM", v/1e6)
}

// Plural says "1 topic", "3 topics".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Agree is the word that agrees with n: one for 1, many otherwise ("was", "were").
func Agree(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Counted says a count with its noun: "1 letter", "12.3k letters" (Count's form).
func Counted(v int64, what string) string {
	if v == 1 {
		return "1 " + what
	}
	return Count(v) + " " + what + "s"
}

// Count formats a count compactly: 118, 2340, 12.3k, 1.2M.
func Count(v int64) string {
	switch {
	case v < 10_000:
		return fmt.Sprintf("%d", v)
	case v < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(v)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(v)/1e6)
}

// Bytes formats a size in binary units: 0 B, 1.0 KiB, 3.3 MiB.
func Bytes(v int64) string {
	const unit = 1024
	if v < unit {
		return fmt.Sprintf("%d B", v)
	}
	div, exp := int64(unit), 0
	for n := v / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(v)/float64(div), "KMGTPE"[exp])
}

// Age formats how long ago t was, relative to now: 12s, 5m, 3h, 2d.
func Age(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// Width is the number of cells s takes; plain ASCII (most of what a table holds) skips the
// grapheme segmentation, which dominates the cost of a frame otherwise.
func Width(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || c == 0x1b || c < 0x20 {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// Trunc cuts s (which may hold ANSI styles) to w cells, ending with … when cut.
func Trunc(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if Width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// Pad pads or cuts s to exactly w cells; right aligns it to the right.
func Pad(s string, w int, right bool) string {
	s = Trunc(s, w)
	gap := w - Width(s)
	if gap <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", gap) + s
	}
	return s + strings.Repeat(" ", gap)
}

// Lines pads or cuts text to exactly h lines of w cells, so pages always fill their area.
func Lines(text string, w, h int) string {
	lines := strings.Split(text, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	for i, l := range lines {
		lines[i] = Pad(l, w, false)
	}
	return strings.Join(lines, "\n")
}

// Subject is what a screen reads: a topic (its full name) and the subscription it reads through
// ("" none), to name what an error says is missing.
type Subject struct{ Topic, Sub string }

// Missing names what err says is not there, in a user's words: "subscription billing of
// public/demo/orders", "namespace public/demo", or the topic itself.
func (s Subject) Missing(err error) string {
	t := data.ParseTopic(s.Topic)
	switch data.MissingOf(err) {
	case data.MissingSubscription:
		if s.Sub != "" {
			return "subscription " + s.Sub + " of " + naming.ShortName(s.Topic, "")
		}
	case data.MissingNamespace:
		return "namespace " + t.NamespaceName()
	case data.MissingTenant:
		return "tenant " + t.Tenant
	}
	return naming.ShortName(s.Topic, "")
}

// ErrorState is what a screen shows instead of its data when its own reading failed: what is
// missing (or the topic), the problem in words, what can be done, and the error itself.
func ErrorState(st *Styles, about Subject, err error, w, h int) string {
	p := ProblemOf(err)
	var advice string
	switch {
	case p == ProblemNotFound && data.MissingOf(err) == data.MissingSubscription && about.Sub != "":
		advice = "The topic is there, without this subscription: deleted, or the name is wrong. ctrl+r looks again; esc goes back."
	case p == ProblemNotFound:
		advice = "It does not exist: deleted, or the name is wrong. ctrl+r looks again; esc goes back."
	case p == ProblemUnauthorized:
		advice = "The cluster refuses this role (token or certificate) to read it. esc goes back."
	case p == ProblemUnreachable:
		advice = "letterbox keeps trying; ctrl+r tries now. esc goes back."
	default:
		advice = "ctrl+r tries again; esc goes back."
	}
	what := naming.ShortName(about.Topic, "")
	if p == ProblemNotFound {
		what = about.Missing(err)
	}
	lines := []string{st.Paint(&st.Error, Trunc("✗ "+termtext.Line(what)+": "+p.Words(), w))}
	for _, l := range Wrap(advice, w-2, 2) {
		lines = append(lines, st.Paint(&st.Text, "  "+l))
	}
	for _, l := range Wrap("("+termtext.Line(err.Error())+")", w-2, 3) {
		lines = append(lines, st.Paint(&st.Subtle, "  "+l))
	}
	return Lines(strings.Join(lines, "\n"), w, h)
}

// Wrap breaks plain text into lines of at most w cells at spaces (mid-word when a word is
// longer), at most n of them, the last ending with … when more was cut.
func Wrap(text string, w, n int) []string {
	if w <= 0 || n <= 0 {
		return nil
	}
	lines := strings.Split(ansi.Hardwrap(ansi.Wordwrap(text, w, ""), w, true), "\n")
	if len(lines) > n {
		lines = lines[:n]
		lines[n-1] = Trunc(strings.TrimRight(lines[n-1], " ")+" …", w)
	}
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return lines
}
