package cli

import (
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/dlqops"
)

// What "letterbox dlq export" writes for each letter, as JSON lines or CSV. The message as
// stored comes first (what a consumer of the DLQ receives, exactly), then the fields
// client/deadletter reads out of its properties, for jq and spreadsheets.

// Payload encodings (--payload, and the payload_encoding field).
const (
	payloadAuto   = "auto"   // text when the payload is valid UTF-8, else base64
	payloadText   = "text"   // always text: bytes that are not UTF-8 become U+FFFD (lossy)
	payloadBase64 = "base64" // always standard base64
)

// letterRecord is one exported letter, one line of jsonl.
type letterRecord struct {
	ID              string            `json:"id"` // dlqops.Position: ledger:entry[:partition[:batch]]
	Key             string            `json:"key"`
	OrderingKey     string            `json:"ordering_key"`
	PublishTime     string            `json:"publish_time"` // RFC 3339, UTC, milliseconds
	EventTime       string            `json:"event_time"`   // "" when the producer set none
	ProducerName    string            `json:"producer_name"`
	Properties      map[string]string `json:"properties"`
	PayloadEncoding string            `json:"payload_encoding"` // "text" or "base64"
	Payload         string            `json:"payload"`
	// Read out of the properties (client/deadletter.Read).
	Origin             string `json:"origin"`
	OriginSubscription string `json:"origin_subscription"`
	OriginMessageID    string `json:"origin_message_id"`
	Reason             string `json:"reason"`
	// ReconsumeTimes is RECONSUMETIMES, the retry hops before the letter died; null when
	// absent (it died by redelivery alone). A reader's redelivery count is always 0, so it
	// is not exported.
	ReconsumeTimes *int `json:"reconsume_times"`
	// Acknowledged: the subscription exported acknowledged the letter, and the DLQ still
	// retains it (--include-acknowledged; false otherwise).
	Acknowledged bool `json:"acknowledged"`
}

// csvHeader names the CSV columns, in the order of letterRecord's fields.
var csvHeader = []string{"id", "key", "ordering_key", "publish_time", "event_time", "producer_name", "properties",
	"payload_encoding", "payload", "origin", "origin_subscription", "origin_message_id", "reason", "reconsume_times", "acknowledged"}

func newLetterRecord(m *client.Message, l *deadletter.Letter, acked bool, mode string) *letterRecord {
	r := &letterRecord{ID: dlqops.PositionOf(m.ID).String(), Key: m.Key, OrderingKey: m.OrderingKey,
		PublishTime: utcMilli(m.PublishTime), EventTime: utcMilli(m.EventTime), ProducerName: m.ProducerName,
		Properties: m.Properties, Origin: l.Origin, OriginSubscription: l.Subscription, OriginMessageID: l.OriginID,
		Reason: l.Reason, Acknowledged: acked}
	if r.Properties == nil {
		r.Properties = map[string]string{} // {} whether or not the letter has properties
	}
	if l.Reconsumes >= 0 {
		n := l.Reconsumes
		r.ReconsumeTimes = &n
	}
	r.PayloadEncoding, r.Payload = encodePayload(m.Payload, mode)
	return r
}

// encodePayload writes a payload as text or base64, as mode asks.
func encodePayload(p []byte, mode string) (encoding, text string) {
	if mode == payloadBase64 || (mode == payloadAuto && !utf8.Valid(p)) {
		return payloadBase64, base64.StdEncoding.EncodeToString(p)
	}
	return payloadText, strings.ToValidUTF8(string(p), "\uFFFD")
}

// utcMilli is t as RFC 3339 in UTC with milliseconds; "" for the zero time (unset).
func utcMilli(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(rfc3339Milli)
}

// letterWriter writes records in one format; flush ends the output.
type letterWriter interface {
	write(r *letterRecord) error
	flush() error
}

func newLetterWriter(format string, w io.Writer) (letterWriter, error) {
	switch format {
	case "jsonl":
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false) // payloads hold <, > and & often; \u003c is noise to a reader
		return jsonlWriter{enc}, nil
	case "csv":
		cw := csv.NewWriter(w)
		if err := cw.Write(csvHeader); err != nil {
			return nil, err
		}
		return csvWriter{cw}, nil
	}
	return nil, fmt.Errorf("unknown format %q", format)
}

type jsonlWriter struct{ enc *json.Encoder }

func (j jsonlWriter) write(r *letterRecord) error { return j.enc.Encode(r) }
func (j jsonlWriter) flush() error                { return nil }

type csvWriter struct{ w *csv.Writer }

func (c csvWriter) write(r *letterRecord) error {
	var props strings.Builder
	enc := json.NewEncoder(&props)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r.Properties); err != nil {
		return err
	}
	reconsumes := ""
	if r.ReconsumeTimes != nil {
		reconsumes = strconv.Itoa(*r.ReconsumeTimes)
	}
	return c.w.Write([]string{r.ID, r.Key, r.OrderingKey, r.PublishTime, r.EventTime, r.ProducerName, strings.TrimSuffix(props.String(), "\n"),
		r.PayloadEncoding, r.Payload, r.Origin, r.OriginSubscription, r.OriginMessageID, r.Reason, reconsumes,
		strconv.FormatBool(r.Acknowledged)})
}

func (c csvWriter) flush() error {
	c.w.Flush()
	return c.w.Error()
}
