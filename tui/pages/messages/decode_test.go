package messages

import (
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/letterbox-dev/letterbox/tui/data"
	_ "github.com/letterbox-dev/letterbox/tui/tuitest" // the -update flag of `go test ./tui/...`
)

func TestDecode(t *testing.T) {
	var d decoder
	if s, form := d.decode([]byte(`{"a":[1,2]}`), DecodeAuto); form != "json" || !strings.Contains(s, "\n  \"a\": [") {
		t.Errorf("json: %s %q", form, s)
	}
	if s, form := d.decode([]byte("plain text"), DecodeAuto); form != "string" || s != "plain text" {
		t.Errorf("string: %s %q", form, s)
	}
	s, form := d.decode([]byte{0, 1, 'A', 0xff}, DecodeAuto)
	if form != "hex" || !strings.HasPrefix(s, "00000000  00 01 41 ff") || !strings.HasSuffix(s, "|..A.|") {
		t.Errorf("hex: %s %q", form, s)
	}
	if _, form := d.decode([]byte(`{"a":1}`), DecodeHex); form != "hex" {
		t.Errorf("forced hex: %s", form)
	}
}

func TestDecodeAvro(t *testing.T) {
	def := `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"n","type":"int"}]}`
	sch := avro.MustParse(def)
	payload, err := avro.Marshal(sch, map[string]any{"id": "o-1", "n": 7})
	if err != nil {
		t.Fatal(err)
	}
	d := newDecoder(&data.SchemaInfo{Type: "AVRO", Definition: def})
	s, form := d.decode(payload, DecodeAuto)
	if form != "avro→json" || !strings.Contains(s, `"id": "o-1"`) || !strings.Contains(s, `"n": 7`) {
		t.Errorf("avro: %s %q", form, s)
	}
}

func TestExportLine(t *testing.T) {
	m := data.Message{ID: "1:2:-1", Topic: "persistent://a/b/c", Payload: []byte{0xff, 0}, PublishTime: time.Unix(0, 0)}
	b, err := ExportLine(m)
	if err != nil || !strings.Contains(string(b), `"payloadBase64":"/wA="`) || !strings.Contains(string(b), `"redeliveryCount":null`) {
		t.Errorf("%s %v", b, err)
	}
	m.Payload, m.RedeliveriesKnown, m.Redeliveries = []byte("hi"), true, 2
	b, _ = ExportLine(m)
	if !strings.Contains(string(b), `"payload":"hi"`) || !strings.Contains(string(b), `"redeliveryCount":2`) {
		t.Errorf("%s", b)
	}
}
