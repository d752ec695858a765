package replay

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHistoryAppendRead(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state", "replays.jsonl")
	if got, err := ReadHistory(path, "", "", 0); err != nil || got != nil {
		t.Fatalf("missing file: %v %v", got, err)
	}
	when := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	for i := range 5 {
		dlq := "public/demo/orders-billing-DLQ"
		if i%2 == 1 {
			dlq = "persistent://public/demo/other-DLQ"
		}
		e := HistoryEntry{When: when.Add(time.Duration(i) * time.Minute), DLQ: dlq, Subscription: "s",
			Selection: fmt.Sprintf("sel %d", i), Moved: int64(i), Result: "complete", By: "tui"}
		if err := AppendHistory(path, e); err != nil {
			t.Fatal(err)
		}
	}
	// A torn last line (a writer killed mid-write) is skipped.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"when":"2026-03`)
	f.Close()
	got, err := ReadHistory(path, "", "persistent://public/demo/orders-billing-DLQ", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Selection != "sel 4" || got[1].Selection != "sel 2" || got[0].Moved != 4 {
		t.Fatalf("got %+v", got)
	}
	all, _ := ReadHistory(path, "", "", 0)
	if len(all) != 5 {
		t.Fatalf("all: %d entries", len(all))
	}
}

func TestHistoryPathAndResult(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	p, err := DefaultHistoryPath()
	if err != nil || p != filepath.Join("/state", "letterbox", "replays.jsonl") {
		t.Fatalf("path %q %v", p, err)
	}
	for _, c := range []struct {
		s    Summary
		err  error
		want string
	}{
		{Summary{Complete: true, Progress: Progress{Moved: 1}}, nil, "complete"},
		{Summary{Complete: true, Progress: Progress{Skipped: 5}}, nil, ResultNothingSelected},
		{Summary{Complete: true, Progress: Progress{Skipped: 5, Guarded: 1}}, nil, "complete"},
		{Summary{Complete: true, Resumed: true}, nil, "complete"},
		{Summary{}, nil, "incomplete"},
		{Summary{}, fmt.Errorf("run: %w", context.Canceled), "cancelled"},
		{Summary{}, errors.New("boom"), "error: boom"},
	} {
		if got := Result(c.s, c.err); got != c.want {
			t.Errorf("Result(%+v, %v) = %q, want %q", c.s, c.err, got, c.want)
		}
	}
}

// TestHistoryByCluster: two clusters' actions on DLQs of the same name stay apart, and
// entries from before the history was keyed show only to a reader of every cluster.
func TestHistoryByCluster(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "replays.jsonl")
	dlq := "persistent://public/demo/orders-billing-DLQ"
	a, b := ClusterKey("", "http://a:8080/"), ClusterKey("prod", "http://b:8080")
	demo := "demo:2026-12-01T08:00:00Z"
	for i, c := range []string{"", a, b, a, demo} {
		e := HistoryEntry{When: time.Unix(int64(i), 0), Action: ActionDiscard, Cluster: c, DLQ: dlq, Selection: fmt.Sprint(i)}
		if err := AppendHistory(path, e); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		cluster string
		want    []string
	}{{a, []string{"3", "1"}}, {b, []string{"2"}}, {demo, []string{"4"}}, {"", []string{"4", "3", "2", "1", "0"}}} {
		got, err := ReadHistory(path, c.cluster, dlq, 0)
		if err != nil {
			t.Fatal(err)
		}
		var sel []string
		for _, e := range got {
			sel = append(sel, e.Selection)
		}
		if fmt.Sprint(sel) != fmt.Sprint(c.want) {
			t.Errorf("cluster %q: %v, want %v", c.cluster, sel, c.want)
		}
	}
	if a != "http://a:8080" || b != "context:prod" {
		t.Errorf("keys %q %q", a, b)
	}
	if e := (HistoryEntry{}); e.What() != ActionReplay {
		t.Errorf("an old entry is a %q", e.What())
	}
	if u := Actor(); !strings.Contains(u, "@") {
		t.Errorf("actor %q", u)
	}
}
