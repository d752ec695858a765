package cli

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/letterbox-dev/letterbox/docs"
	"github.com/letterbox-dev/letterbox/internal/helptext"
)

// helpTopic is a subject of `letterbox help TOPIC`: the parts of docs/ marked for it
// (helptext), so that the help and the documentation are one text.
type helpTopic struct {
	name, summary string
}

// helpTopics are the topics, in the order of the help.
var helpTopics = []helpTopic{
	{"filter", "the filter expressions of --filter and the TUI's /"},
	{"dlq-rule", "which topics are DLQs and retry topics, and where their letters come from"},
	{"config", "the configuration file: contexts, credentials, TLS, colours"},
}

// topicText renders the parts of every file of docs/ marked for the topic name.
func topicText(name string) (string, error) {
	files, err := fs.Glob(docs.Files, "*.md")
	if err != nil {
		return "", err
	}
	var parts []string
	for _, f := range files {
		raw, err := fs.ReadFile(docs.Files, f)
		if err != nil {
			return "", err
		}
		md, err := helptext.Extract(string(raw), name)
		if err != nil {
			return "", fmt.Errorf("docs/%s: %w", f, err)
		}
		if md != "" {
			parts = append(parts, md)
		}
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("no text is marked for the topic %q in docs/", name)
	}
	return helptext.Render(strings.Join(parts, "\n\n")), nil
}

// runHelp is `letterbox help [TOPIC|COMMAND]`.
func runHelp(args []string, stdout, stderr io.Writer) int {
	const name = "letterbox help"
	switch {
	case len(args) == 0:
		usage(stdout)
		io.WriteString(stdout, "\nHelp topics (letterbox help TOPIC):\n")
		for _, t := range helpTopics {
			fmt.Fprintf(stdout, "  %-26s %s\n", t.name, t.summary)
		}
		return ExitOK
	case len(args) > 1:
		return usageError(stderr, name, fmt.Errorf("unexpected argument %q", args[1]))
	}
	for _, t := range helpTopics {
		if t.name == args[0] {
			text, err := topicText(t.name)
			if err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", name, err)
				return ExitFailure
			}
			io.WriteString(stdout, text)
			return ExitOK
		}
	}
	if cmd, ok := findCommand(commandTable(), args[0]); ok && !cmd.hidden && cmd.name != "help" {
		return RunProcess(context.Background(), Process{}, []string{cmd.name, "--help"}, stdout, stderr)
	}
	return usageError(stderr, name, fmt.Errorf("no help on %q (topics: %s; or a command: %s)", args[0], topicNames(), commandNames(commandTable())))
}

func topicNames() string {
	names := make([]string, len(helpTopics))
	for i, t := range helpTopics {
		names[i] = t.name
	}
	return strings.Join(names, ", ")
}
