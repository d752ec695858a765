package cli

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/letterbox-dev/letterbox/docs"
	"github.com/letterbox-dev/letterbox/internal/helptext"
)

func TestHelpTopics(t *testing.T) {
	t.Parallel()
	for _, topic := range helpTopics {
		code, out, errOut := run(t, "help", topic.name)
		if code != ExitOK || errOut != "" || len(strings.Split(out, "\n")) < 10 {
			t.Errorf("help %s: code %d, stderr %q, output:\n%s", topic.name, code, errOut, out)
		}
	}
	// Every topic docs/ marks is one the help offers: a marker with a typo would otherwise
	// leave its text out of the help unnoticed.
	files, err := fs.Glob(docs.Files, "*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		raw, err := fs.ReadFile(docs.Files, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range helptext.Topics(string(raw)) {
			if !slices.ContainsFunc(helpTopics, func(h helpTopic) bool { return h.name == name }) {
				t.Errorf("docs/%s marks text for the topic %q, which letterbox help does not have", f, name)
			}
		}
	}

	code, out, _ := run(t, "help")
	for _, topic := range helpTopics {
		if code != ExitOK || !strings.Contains(out, "  "+topic.name+" ") {
			t.Errorf("help: code %d, does not list the topic %s:\n%s", code, topic.name, out)
		}
	}
	_, dlqHelp, _ := run(t, "dlq", "--help")
	if code, out, _ := run(t, "help", "dlq"); code != ExitOK || out != dlqHelp {
		t.Errorf("help dlq: code %d, not dlq --help:\n%s", code, out)
	}
	if code, _, errOut := run(t, "help", "nope"); code != ExitUsage || !strings.Contains(errOut, "filter, dlq-rule, config") {
		t.Errorf("help nope: code %d, stderr %q", code, errOut)
	}
}
