package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/data/datatest"
)

// After a replay, the screen counts the moved letters that died again and came back to the
// DLQ (they carry REPLAYED_FROM, their old id there), at each refresh.
func TestReplayCountsReturns(t *testing.T) {
	h := newHarness(t, 160, 48, "")
	dlq := "persistent://public/demo/orders-billing-DLQ"
	h.src.Lock()
	n := len(h.src.Messages[dlq])
	h.src.Unlock()
	h.command("dlq public/demo/orders-billing-DLQ")
	h.keys("R", "enter", "y")
	if s := h.plain(); !strings.Contains(s, "none of the 4 moved letters has returned to the DLQ") {
		t.Fatalf("no count of returns after the run (%d letters):\n%s", n, s)
	}
	// Two of them fail again: the DLQ gets them back, with REPLAYED_FROM.
	h.src.Lock()
	for i, old := range []string{"7:0:-1", "7:2:-1"} {
		id, err := client.ParseMessageID(old)
		if err != nil {
			t.Fatal(err)
		}
		from := data.ReplayEvent{ID: id}.IDString() // as the engine writes REPLAYED_FROM
		h.src.Messages[dlq] = append(h.src.Messages[dlq], data.Message{ID: fmt.Sprintf("9:%d:-1", i), Topic: dlq,
			Key: "again", PublishTime: datatest.FakeEpoch, Properties: map[string]string{"REPLAYED_FROM": from, "REPLAY_COUNT": "1"}})
	}
	h.src.Unlock()
	h.send(common.RefreshMsg{})
	if s := h.plain(); !strings.Contains(s, "2 of 4 moved letters returned to the DLQ since the run") {
		t.Fatalf("the returns were not counted:\n%s", s)
	}
}
