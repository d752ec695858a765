package messages

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// ExportedMsg reports a finished export.
type ExportedMsg struct {
	Path string
	N    int
}

// exportLine is one message as a JSON line. The payload is JSON when it is JSON, a string when
// it is text, and base64 (payloadBase64) otherwise; redeliveryCount is null for peeked messages,
// which carry none.
type exportLine struct {
	ID              string            `json:"id"`
	Topic           string            `json:"topic"`
	Key             string            `json:"key,omitempty"`
	Properties      map[string]string `json:"properties,omitempty"`
	PublishTime     string            `json:"publishTime,omitempty"`
	EventTime       string            `json:"eventTime,omitempty"`
	RedeliveryCount *int              `json:"redeliveryCount"`
	Payload         json.RawMessage   `json:"payload,omitempty"`
	PayloadBase64   string            `json:"payloadBase64,omitempty"`
}

// ExportLine encodes m as one JSON line (without the newline).
func ExportLine(m data.Message) ([]byte, error) {
	l := exportLine{ID: m.ID, Topic: m.Topic, Key: m.Key, Properties: m.Properties}
	if !m.PublishTime.IsZero() {
		l.PublishTime = m.PublishTime.UTC().Format(time.RFC3339Nano)
	}
	if !m.EventTime.IsZero() {
		l.EventTime = m.EventTime.UTC().Format(time.RFC3339Nano)
	}
	if m.RedeliveriesKnown {
		n := m.Redeliveries
		l.RedeliveryCount = &n
	}
	switch {
	case json.Valid(m.Payload) && len(m.Payload) > 0:
		l.Payload = json.RawMessage(compact(m.Payload))
	case printable(m.Payload):
		b, _ := json.Marshal(string(m.Payload))
		l.Payload = b
	default:
		l.PayloadBase64 = base64.StdEncoding.EncodeToString(m.Payload)
	}
	return json.Marshal(l)
}

func compact(b []byte) []byte {
	var out []byte
	if c, err := json.Marshal(json.RawMessage(b)); err == nil {
		out = c
	} else {
		out = b
	}
	return out
}

// export writes msgs to path (relative to dir, else to the working directory) in a command.
// It never writes inside noDir, the embedded broker's data: a file there would be taken for
// the broker's own, or break it.
func export(dir, noDir, path string, msgs []data.Message) tea.Cmd {
	return func() tea.Msg {
		path, err := exportPath(dir, noDir, path)
		if err != nil {
			return common.ErrorMsg{What: "export", Err: err}
		}
		var buf []byte
		for _, m := range msgs {
			b, err := ExportLine(m)
			if err != nil {
				return common.ErrorMsg{What: "export", Err: err}
			}
			buf = append(append(buf, b...), '\n')
		}
		// The letters' own, so private; a file that exists keeps its mode.
		if err := os.WriteFile(path, buf, 0o600); err != nil {
			return common.ErrorMsg{What: "export", Err: err}
		}
		return ExportedMsg{Path: path, N: len(msgs)}
	}
}

// exportPath is where an export named path goes, absolute.
func exportPath(dir, noDir, path string) (string, error) {
	if path = expandHome(path); !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if noDir != "" {
		if d, err := filepath.Abs(noDir); err == nil && within(d, abs) {
			return "", fmt.Errorf("refused: inside the embedded broker's data directory (%s): give another path; export_dir in config.toml sets where exports go", d)
		}
	}
	return abs, nil
}

// within reports whether path is dir or below it, symbolic links resolved where they exist.
func within(dir, path string) bool {
	resolve := func(p string) string {
		// The file does not exist yet: resolve its directory.
		if r, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			return filepath.Join(r, filepath.Base(p))
		}
		return p
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	rel, err := filepath.Rel(dir, resolve(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// expandHome replaces a leading ~/ with the home directory, as a shell would.
func expandHome(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

// defaultExportName is the file name the export prompt proposes.
func defaultExportName(topic string, now time.Time) string {
	n := data.ParseTopic(topic)
	return fmt.Sprintf("%s-%s.jsonl", n.Local, now.UTC().Format("20060102-150405"))
}
