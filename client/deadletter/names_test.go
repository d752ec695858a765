package deadletter

import (
	"fmt"
	"strings"
	"testing"
)

func TestPropertyNames(t *testing.T) {
	var none *PropertyNames = NewPropertyNames(nil)
	none.Add(map[string]string{"a": "b"}) // a read whose filter names no property pays nothing
	if none.Warning() != "" || none.Unseen() != nil {
		t.Error("a nil tally warns")
	}
	n := NewPropertyNames([]string{"regoin", "tenant", "x\x1b"})
	n.Add(map[string]string{"region": "eu", "tenant": "acme"})
	n.Add(map[string]string{"REAL_TOPIC": "t"})
	if got := fmt.Sprint(n.Unseen()); got != "[regoin x\x1b]" {
		t.Errorf("Unseen = %q", got)
	}
	want := `no letter has properties regoin, x\x1b; properties seen: REAL_TOPIC, region, tenant`
	if got := n.Warning(); got != want {
		t.Errorf("Warning = %q, want %q", got, want)
	}
	all := NewPropertyNames([]string{"region"})
	all.Add(map[string]string{"region": "eu"})
	if all.Warning() != "" {
		t.Errorf("a name seen warns: %q", all.Warning())
	}
	empty := NewPropertyNames([]string{"region"})
	if w := empty.Warning(); !strings.Contains(w, "carry no properties") {
		t.Errorf("no letter read: %q", w)
	}
	// Past the listing's bound, the watched names are still told exactly.
	many := NewPropertyNames([]string{"late"})
	for i := range maxNamesListed + 5 {
		many.Add(map[string]string{fmt.Sprint("p", i): ""})
	}
	many.Add(map[string]string{"late": "1"})
	if many.Warning() != "" {
		t.Error("a watched name seen past the bound is reported unseen")
	}
	many2 := NewPropertyNames([]string{"never"})
	for i := range maxNamesListed + 5 {
		many2.Add(map[string]string{fmt.Sprint("p", i): ""})
	}
	if w := many2.Warning(); !strings.Contains(w, "no letter has property never") || !strings.Contains(w, "more and others)") {
		t.Errorf("bounded listing: %q", w)
	}
}
