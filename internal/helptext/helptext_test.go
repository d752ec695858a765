package helptext

import (
	"strings"
	"testing"
)

func TestExtract(t *testing.T) {
	doc := `# Title

<!-- letterbox help a: begin -->
First part.
<!-- letterbox help a: end -->

Not in it.

<!-- letterbox help b: begin -->
Of b.
<!-- letterbox help b: end -->
<!-- letterbox help a: begin -->
Second part.
<!-- letterbox help a: end -->
`
	got, err := Extract(doc, "a")
	if err != nil || got != "First part.\n\nSecond part." {
		t.Errorf("Extract a: %q, %v", got, err)
	}
	if got, err := Extract(doc, "c"); err != nil || got != "" {
		t.Errorf("Extract c: %q, %v", got, err)
	}
	if got := Topics(doc); strings.Join(got, ",") != "a,b" {
		t.Errorf("Topics: %q", got)
	}
	for _, bad := range []string{
		"<!-- letterbox help a: begin -->\nx\n",
		"x\n<!-- letterbox help a: end -->\n",
		"<!-- letterbox help a: begin -->\n<!-- letterbox help a: begin -->\n<!-- letterbox help a: end -->\n",
	} {
		if _, err := Extract(bad, "a"); err == nil {
			t.Errorf("Extract(%q): no error", bad)
		}
	}
}

func TestRender(t *testing.T) {
	md := "## A heading\n\n" +
		"A paragraph with `code`, **bold**, *emphasis*, a [page](guide.md#contexts), a [site](https://pulsar.apache.org) " +
		"and an [anchor](#here), long enough that it has to be wrapped at eighty columns.\n\n" +
		"1. An item\n   that goes on.\n   - a nested one\n   Back in the item.\n2. `a | b` stays whole.\n\n" +
		"```toml\nkey = \"value\"   # kept as it is\n```\n\n" +
		"| condition | selects |\n|---|---|\n| `key=V` | by the key |\n| `a|b` | a pipe in code |\n| `a \\|\\| b` | escaped pipes |\n\n" +
		"Join with ` and ` between.\n"
	want := `A heading

A paragraph with code, bold, emphasis, a page (docs/guide.md), a site
(https://pulsar.apache.org) and an anchor, long enough that it has to be wrapped
at eighty columns.

1. An item that goes on.
   - a nested one
   Back in the item.
2. a | b stays whole.

    key = "value"   # kept as it is

  key=V
      by the key
  a|b
      a pipe in code
  a || b
      escaped pipes

Join with ` + "` and `" + ` between.
`
	if got := Render(md); got != want {
		t.Errorf("Render:\n%s\nwant:\n%s", got, want)
	}
}
