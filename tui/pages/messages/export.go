package messages

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// export writes msgs to path (relative to dir) in a command.
func export(dir, path string, msgs []data.Message) tea.Cmd {
	return func() tea.Msg {
		if !filepath.IsAbs(path) && dir != "" {
			path = filepath.Join(dir, path)
		}
		var buf []byte
		for _, m := range msgs {
			b, err := ExportLine(m)
			if err != nil {
				return common.ErrorMsg{What: "export", Err: err}
			}
			buf = append(append(buf, b...), '\n')
		}
		if err := os.WriteFile(path, buf, 0o644); err != nil {
			return common.ErrorMsg{What: "export", Err: err}
		}
		return ExportedMsg{Path: path, N: len(msgs)}
	}
}

// defaultExportName is the file name the export prompt proposes.
func defaultExportName(topic string, now time.Time) string {
	n := data.ParseTopic(topic)
	return fmt.Sprintf("%s-%s.jsonl", n.Local, now.UTC().Format("20060102-150405"))
}
