package tui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/filter"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/data/datatest"
)

// harnessOn is a harness over src at w×h.
func harnessOn(t *testing.T, src *datatest.Fake, w, h int) *harness {
	t.Helper()
	hs := newHarnessWith(t, w, h, func(o *Options) { o.Source = src })
	hs.src = src
	return hs
}

// asked returns what the fake was asked for since the last call, and forgets it.
func asked(f *datatest.Fake) [][]string {
	f.Lock()
	defer f.Unlock()
	a := f.Asked
	f.Asked = nil
	return a
}

// A listing without stats (a cluster too large for broker-wide stats, or topics no broker has
// loaded): the screen asks for the rows it shows, and only those, one request at a time, and
// shows their numbers; going to the end asks for the last ones.
func TestTopicsAskForTheRowsOnScreen(t *testing.T) {
	src := bigFake(300)
	src.ListsWithoutStats = true
	h := harnessOn(t, src, 120, 24)
	first := asked(src)
	if len(first) != 1 || len(first[0]) == 0 || len(first[0]) > 24 {
		t.Fatalf("asked %v at the first frame: want one request for the rows on screen", first)
	}
	screen := h.plain()
	for _, name := range first[0] {
		local := data.ParseTopic(name).Local
		if !strings.Contains(screen, local) {
			t.Errorf("asked for %s, which is not on screen:\n%s", local, screen)
		}
	}
	if strings.Contains(screen, "…") {
		t.Errorf("rows on screen still without numbers after their details came:\n%s", screen)
	}
	h.keys("end")
	next := asked(src)
	if len(next) != 1 || len(next[0]) == 0 {
		t.Fatalf("asked %v after going to the end: want one request", next)
	}
	for _, name := range next[0] {
		if slices.Contains(first[0], name) {
			t.Errorf("%s asked again after going to the end", name)
		}
	}
	if s := h.plain(); strings.Contains(s, "…") || !strings.Contains(s, "topic-00299") {
		t.Errorf("the last rows without numbers after going to the end:\n%s", s)
	}
}

// A listing of more than data.OnScreenFrom topics is not read again on every refresh: a refresh
// asks for the rows on screen; a forced one lists again.
func TestTopicsLargeListingRefreshesTheRowsOnScreen(t *testing.T) {
	src := bigFake(data.OnScreenFrom + 1)
	src.ListsWithoutStats = true
	h := harnessOn(t, src, 120, 24)
	asked(src)
	listed := func() int { src.Lock(); defer src.Unlock(); return src.Listings }
	before := listed()
	h.send(common.RefreshMsg{})
	if got := asked(src); listed() != before || len(got) != 1 || len(got[0]) == 0 {
		t.Errorf("a refresh listed %d times and asked %v; want no listing and one request for the rows on screen", listed()-before, got)
	}
	h.send(common.RefreshMsg{Forced: true})
	if listed() != before+1 {
		t.Errorf("a forced refresh listed %d times, want once", listed()-before)
	}
}

// Typing narrows the filter's matches and backspace widens them again: the rows shown are
// always those filter.Match lets through, in the screen's order.
func TestTopicsFilterNarrowsAndWidens(t *testing.T) {
	src := bigFake(2000)
	h := harnessOn(t, src, 120, 24)
	want := func(pattern string) int {
		n := 0
		for _, r := range src.Rows {
			if _, ok := filter.Match(pattern, r.Namespace+"/"+r.Local); ok {
				n++
			}
		}
		return n
	}
	h.keys("/")
	typed := ""
	check := func() {
		t.Helper()
		var got int
		if _, err := fmt.Sscanf(strings.SplitN(h.plain(), " · ", 3)[2], "%d topic", &got); err != nil {
			t.Fatalf("no topic count on screen: %v\n%s", err, h.plain())
		}
		if w := want(typed); got != w {
			t.Errorf("filter %q shows %d topics, want %d", typed, got, w)
		}
	}
	for _, r := range "ns3/1dlq" {
		typed += string(r)
		h.keys(string(r))
		check()
	}
	for range 4 {
		typed = typed[:len(typed)-1]
		h.keys("backspace")
		check()
	}
	for _, r := range "9" {
		typed += string(r)
		h.keys(string(r))
		check()
	}
	if typed != "ns3/9" {
		t.Fatalf("typed %q", typed)
	}
}
