package replay

import (
	"strings"
	"testing"
)

// TestParseIDsNamesSomething: a list of ids that names nothing, or has an empty item, is an
// error, never an empty selection (which would take every letter).
func TestParseIDsNamesSomething(t *testing.T) {
	for _, bad := range []string{"", " ", ",", " , ", "1:2,,1:3", "1:2,", ",1:2", "1:x"} {
		if ids, err := ParseIDs(bad); err == nil {
			t.Errorf("ParseIDs(%q) = %v, want an error", bad, ids)
		}
	}
	ids, err := ParseIDs(" 1:2 , 3:4:0:1")
	if err != nil || len(ids) != 2 || ids[1].BatchIndex != 1 {
		t.Errorf("ParseIDs = %v, %v", ids, err)
	}
	if _, err := ParseIDs("1:2,,3:4"); err == nil || !strings.Contains(err.Error(), "item 2") {
		t.Errorf("the empty item is not named: %v", err)
	}
}
