package replay

import (
	"strings"
	"testing"
	"time"
)

func TestPendingRunDescribeDatesAnotherDay(t *testing.T) {
	now := time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)
	run := PendingRun{Name: "letterbox-replay-x", Started: time.Date(2026, 3, 14, 8, 4, 0, 0, time.UTC), Moved: 11, Skipped: 2}
	if got, want := run.Describe(now), "run letterbox-replay-x of 08:04: 11 already moved, 2 skipped, 0 failed"; got != want {
		t.Errorf("same day:\n got %q\nwant %q", got, want)
	}
	run.Started = run.Started.AddDate(0, 0, -1)
	if got := run.Describe(now); !strings.Contains(got, " of 2026-03-13 08:04: ") {
		t.Errorf("the day before: %q", got)
	}
}
