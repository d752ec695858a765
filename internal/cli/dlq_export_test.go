package cli

import (
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// TestDLQExport exports a DLQ the official Go client's DLQ router filled, and checks each
// letter against what an official consumer of the DLQ receives: payloads (text, and binary
// as base64), keys, properties, times and producer; the CSV holds the same rows; --output
// names the file's absolute path; the DLQ is not consumed.
func TestDLQExport(t *testing.T) {
	t.Parallel()
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	dlq := dlqNS + "orders-dlq"
	event := time.UnixMilli(1_764_000_000_123)
	routeOfficial(t, env, dlq, []*pulsar.ProducerMessage{
		{Payload: []byte(`{"order":1,"note":"<b>&</b>"}`), Key: "order-1", EventTime: event,
			Properties: map[string]string{"error": "card declined", "quote": `say "hi", then
leave`}},
		{Payload: []byte{0xff, 0x00, 0xfe, 'x', 0x80}, Key: "order-2"},
		{Payload: []byte("héllo, wörld"), OrderingKey: "ok-3", Properties: map[string]string{"RECONSUMETIMES": "2"}},
	})
	before := subscriptionBacklogs(t, ctx, env.Admin, dlq)

	code, out, errOut := runDLQCmd(t, ctx, env, "export", "orders-dlq")
	if code != ExitOK || errOut != "" {
		t.Fatalf("export: code %d, stderr %q", code, errOut)
	}
	var recs []letterRecord
	for l := range strings.Lines(out) {
		var r letterRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		recs = append(recs, r)
	}

	path := filepath.Join(t.TempDir(), "letters.csv")
	rel, err := filepath.Rel(mustGetwd(t), path)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runDLQCmd(t, ctx, env, "export", "orders-dlq", "--format", "csv", "--output", rel)
	if code != ExitOK || out != "" || errOut != fmt.Sprintf("letterbox dlq export: 3 letters written to %s\n", path) {
		t.Fatalf("export --output: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	checkUntouched(t, ctx, env.Admin, dlq, before)

	// What an official consumer of the DLQ's own subscription receives, in order.
	c := officialClient(t, env)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: dlq, SubscriptionName: "billing-keep"})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	if len(recs) != 3 {
		t.Fatalf("exported %d letters, want 3", len(recs))
	}
	for i, r := range recs {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		payload, err := decodePayload(r)
		if err != nil {
			t.Errorf("letter %d: %v", i, err)
		}
		wantEvent := "" // the official client says "unset" with the Unix epoch
		if m.EventTime().UnixMilli() != 0 {
			wantEvent = m.EventTime().UTC().Format(rfc3339Milli)
		}
		id := m.ID()
		if string(payload) != string(m.Payload()) || !maps.Equal(r.Properties, m.Properties()) || r.Key != m.Key() ||
			r.OrderingKey != m.OrderingKey() || r.ProducerName != m.ProducerName() || r.EventTime != wantEvent ||
			r.PublishTime != m.PublishTime().UTC().Format(rfc3339Milli) ||
			!strings.HasPrefix(r.ID, fmt.Sprintf("%d:%d:", id.LedgerID(), id.EntryID())) {
			t.Errorf("letter %d exported as %+v (payload %q); the official consumer received id %v, key %q, ordering key %q, "+
				"producer %q, published %v, event time %v, properties %v, payload %q", i, r, payload, id, m.Key(), m.OrderingKey(),
				m.ProducerName(), m.PublishTime(), m.EventTime(), m.Properties(), m.Payload())
		}
	}
	if recs[0].PayloadEncoding != "text" || recs[1].PayloadEncoding != "base64" || recs[2].PayloadEncoding != "text" ||
		recs[0].EventTime != "2025-11-24T16:00:00.123Z" || recs[0].Reason != "card declined" ||
		recs[0].Origin != dlqNS+"orders" || recs[0].OriginSubscription != "billing" || recs[0].ReconsumeTimes != nil ||
		recs[2].ReconsumeTimes == nil || *recs[2].ReconsumeTimes != 2 {
		t.Errorf("exported %+v", recs)
	}

	// The CSV file holds the same rows.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The letters are the cluster's: the file is its owner's alone.
	if fi, err := f.Stat(); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v, %v; want mode 0600", path, fi.Mode(), err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(recs)+1 || !slices.Equal(rows[0], csvHeader) {
		t.Fatalf("csv: %d rows, header %q", len(rows), rows[0])
	}
	for i, r := range recs {
		got, want := rows[i+1], csvRow(r)
		var props map[string]string
		if err := json.Unmarshal([]byte(got[6]), &props); err != nil || !maps.Equal(props, r.Properties) {
			t.Errorf("csv row %d: properties %q (%v), want %v", i+1, got[6], err, r.Properties)
		}
		got[6] = ""
		if !slices.Equal(got, want) {
			t.Errorf("csv row %d: %q, want %q", i+1, got, want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("the output directory holds %d files, want only the export", len(entries))
	}
	// A file the export replaces keeps the mode its owner gave it.
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runDLQCmd(t, ctx, env, "export", "orders-dlq", "--output", path); code != ExitOK {
		t.Fatalf("export over a file: code %d, stderr %q", code, errOut)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("%s replaced: %v, %v; want the mode it had, 0640", path, fi.Mode(), err)
	}

	// A filter selects; --payload base64 encodes every payload.
	code, out, errOut = runDLQCmd(t, ctx, env, "export", dlq, "--filter", "key~^order-", "--payload", "base64")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != ExitOK || len(lines) != 2 ||
		!strings.Contains(lines[0], `"payload_encoding":"base64","payload":"`+base64.StdEncoding.EncodeToString(payloadOf(t, recs[0]))+`"`) {
		t.Errorf("export --filter --payload base64: code %d, stderr %q, output:\n%s", code, errOut, out)
	}

	// A file that cannot be created fails before anything is read.
	code, _, errOut = runDLQCmd(t, ctx, env, "export", dlq, "--output", filepath.Join(path, "x.jsonl"))
	if code != ExitFailure || !strings.Contains(errOut, "--output") {
		t.Errorf("export to a file under a file: code %d, stderr %q", code, errOut)
	}
}

// decodePayload is the payload an exported letter stands for.
func decodePayload(r letterRecord) ([]byte, error) {
	switch r.PayloadEncoding {
	case "text":
		return []byte(r.Payload), nil
	case "base64":
		return base64.StdEncoding.DecodeString(r.Payload)
	}
	return nil, fmt.Errorf("payload_encoding %q", r.PayloadEncoding)
}

func payloadOf(t *testing.T, r letterRecord) []byte {
	t.Helper()
	p, err := decodePayload(r)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// csvRow is the CSV row of an exported letter, made from its JSON line, without the
// properties (a JSON column, compared decoded).
func csvRow(r letterRecord) []string {
	reconsumes := ""
	if r.ReconsumeTimes != nil {
		reconsumes = strconv.Itoa(*r.ReconsumeTimes)
	}
	return []string{r.ID, r.Key, r.OrderingKey, r.PublishTime, r.EventTime, r.ProducerName, "",
		r.PayloadEncoding, r.Payload, r.Origin, r.OriginSubscription, r.OriginMessageID, r.Reason, reconsumes, strconv.FormatBool(r.Acknowledged)}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
