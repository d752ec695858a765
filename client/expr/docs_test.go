package expr

import (
	"os"
	"strings"
	"testing"
)

// TestDocsListEveryForm holds the user documentation to Forms, the list the --help texts
// print: every variant of every form is written, in backquotes, in the guide and in the
// dead-letters reference.
func TestDocsListEveryForm(t *testing.T) {
	for _, doc := range []string{"../../docs/dead-letters.md", "../../docs/guide.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(b), `\|`, "|") // as a Markdown table escapes it
		text = strings.Join(strings.Fields(text), " ")   // a form may wrap at a line's end
		for _, f := range Forms() {
			for _, v := range strings.Split(f.Syntax, ", ") {
				if !strings.Contains(text, "`"+v+"`") {
					t.Errorf("%s does not document the form `%s`", doc, v)
				}
			}
		}
	}
}
