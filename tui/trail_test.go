package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// The breadcrumb gives way from the left, never cutting a word or a path element, and keeps
// where you are whole while it fits at all (issue 31: "…ard public/…" named no screen).
func TestFitTrail(t *testing.T) {
	crumbs := []string{"Topics", "Dead letters public/demo/orders-billing-DLQ", "resend 7:1:-1"}
	for _, c := range []struct {
		w    int
		want string
	}{
		{80, "Topics › Dead letters public/demo/orders-billing-DLQ › resend 7:1:-1"},
		{60, "…Dead letters public/demo/orders-billing-DLQ › resend 7:1:-1"},
		{40, "…demo/orders-billing-DLQ › resend 7:1:-1"},
		{35, "…orders-billing-DLQ › resend 7:1:-1"},
		{30, "… resend 7:1:-1"},
		{13, "resend 7:1:-1"},
		{9, "rese…1:-1"},
	} {
		if got := fitTrail(crumbs, c.w); got != c.want {
			t.Errorf("at %d cells: %q, want %q", c.w, got, c.want)
		}
	}
}

// Whatever the width, the trail fits, and a cut from the left starts a word or a path element.
func TestFitTrailNeverCutsAWord(t *testing.T) {
	trails := [][]string{
		{"Topics", "Dead letters public/demo/orders-billing-DLQ", "Discard public/demo/orders-billing-DLQ"},
		{"Topics › acme/billing", "Flow acme/billing/invoices · archiver", "letter 12:7:3"},
		{"Topics", "peek payments/live/charges-with-a-very-long-name-for-the-breadcrumb some-subscription"},
		{"Dead letters"},
		{"Topics", "Dead letters ポイント/注文-DLQ", "resend 1:2:3"},
	}
	for _, crumbs := range trails {
		full := strings.Join(crumbs, crumbSep)
		last := crumbs[len(crumbs)-1]
		for w := 1; w <= 120; w++ {
			got := fitTrail(crumbs, w)
			if ansi.StringWidth(got) > w {
				t.Fatalf("%q at %d cells: %q is %d cells", full, w, got, ansi.StringWidth(got))
			}
			switch {
			case got == full, got == last: // the last crumb alone, when "… " would not fit beside it
			case strings.HasSuffix(got, last):
				kept := strings.TrimPrefix(got, "…")
				if kept == got {
					t.Fatalf("%q at %d cells: %q was cut without saying so", full, w, got)
				}
				if kept != " "+last {
					at := strings.LastIndex(full, kept)
					if at <= 0 || (full[at-1] != ' ' && full[at-1] != '/') {
						t.Fatalf("%q at %d cells: %q starts in the middle of a word", full, w, got)
					}
				}
			case ansi.StringWidth(last)+2 <= w:
				t.Fatalf("%q at %d cells: %q lost the last crumb, which fits", full, w, got)
			}
		}
	}
}
