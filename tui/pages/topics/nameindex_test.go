package topics

import (
	"fmt"
	"testing"

	"github.com/letterbox-dev/letterbox/tui/data"
)

func TestNameIndexFindsEveryRow(t *testing.T) {
	var x nameIndex
	if _, ok := x.find(nil, "persistent://a/b/c"); ok {
		t.Fatal("an empty index found a row")
	}
	rows := make([]data.TopicRow, 3000)
	for i := range rows {
		rows[i].Name = fmt.Sprintf("persistent://t/ns%d/topic-%d", i%7, i)
	}
	x.index(rows)
	for i, r := range rows {
		if got, ok := x.find(rows, r.Name); !ok || got != i {
			t.Fatalf("%s: row %d, %v; want %d", r.Name, got, ok, i)
		}
	}
	for _, name := range []string{"", "persistent://t/ns0/topic-3000", "persistent://t/ns1/topic-0"} {
		if i, ok := x.find(rows, name); ok {
			t.Errorf("%q found at row %d, which is %q", name, i, rows[i].Name)
		}
	}
}
