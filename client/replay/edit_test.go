package replay

import (
	"maps"
	"testing"

	"github.com/letterbox-dev/letterbox/client"
)

// An edited resend sends the edit's properties with the replay's bookkeeping over them: the
// letter's id, and its replay count plus one (a count that is missing, negative or no number
// reads as none), whatever the edit says of either.
func TestEditedProperties(t *testing.T) {
	t.Parallel()
	id := client.MessageID{Ledger: 7, Entry: 3, Partition: -1, BatchIndex: -1}
	for _, tc := range []struct{ count, want string }{{"", "1"}, {"2", "3"}, {"-4", "1"}, {"x", "1"}} {
		m := &client.Message{ID: id, Properties: map[string]string{PropertyReplayCount: tc.count}}
		ed := Edit{Properties: map[string]string{"k": "v", PropertyReplayedFrom: "forged", PropertyReplayCount: "99"}}
		got := EditedProperties(m, ed)
		want := map[string]string{"k": "v", PropertyReplayedFrom: idString(id), PropertyReplayCount: tc.want}
		if !maps.Equal(got, want) {
			t.Errorf("count %q: %v, want %v", tc.count, got, want)
		}
		if ed.Properties[PropertyReplayCount] != "99" {
			t.Error("the edit's own properties changed")
		}
	}
}
