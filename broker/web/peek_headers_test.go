package web_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/letterbox-dev/letterbox/client/admin"
)

// A letter is data from a stranger: its key and properties may hold escape sequences, NULs
// and DEL, and names that are no HTTP token. Peeking at it must still give every HTTP client a
// response it can read (Go's refuses a header line holding a control character), the official
// pulsaradmin every property exactly (from the JSON header, with no sanitised per-property
// copy to contradict it), and client/admin the exact key too (the base64 extension).
func TestPeekHostileLetterReadable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const topic = "persistent://public/default/hostile"
	tn := *topicName(t, topic)
	must(t, e.adm.Topics().Create(tn, 0))
	must(t, e.adm.Subscriptions().Create(tn, "dlq", utils.Earliest))
	key := "k\x1b]0;owned\x07\x1b[2J\x00 "
	props := map[string]string{
		"reason":      "boom\x1b[2J\x00\x7f",
		"evil\x1bkey": "v",
		"sp ace":      "spaced",
		"lead":        " padded ",
		"ok":          "fine",
	}
	p, err := e.client(t).CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	must(t, err)
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = p.Send(ctx, &pulsar.ProducerMessage{Key: key, Properties: props, Payload: []byte("p\x1b\x00")})
	must(t, err)

	// Go's HTTP client reads the response: before, it failed on the header line.
	resp, body := do(t, http.MethodGet, e.s.URL()+"/admin/v2/persistent/public/default/hostile/subscription/dlq/position/1")
	if resp.StatusCode != http.StatusOK || body != "p\x1b\x00" {
		t.Fatalf("peek: %d %q", resp.StatusCode, body)
	}
	var fromJSON map[string]string
	if err := json.Unmarshal([]byte(resp.Header.Get("X-Pulsar-PROPERTY")), &fromJSON); err != nil || !maps.Equal(fromJSON, props) {
		t.Errorf("X-Pulsar-PROPERTY = %v (%v), want %q", fromJSON, err, props)
	}
	if got := resp.Header.Get("X-Pulsar-PROPERTY-ok"); got != "fine" {
		t.Errorf("X-Pulsar-PROPERTY-ok = %q, want the plain property kept", got)
	}
	for _, name := range []string{"X-Pulsar-PROPERTY-reason", "X-Pulsar-PROPERTY-lead"} {
		if v, ok := resp.Header[http.CanonicalHeaderKey(name)]; ok {
			t.Errorf("%s = %q: a value a header cannot hold exactly must travel in the JSON header only", name, v)
		}
	}
	if got := resp.Header.Get("X-Pulsar-partition-key"); got != `k\x1b]0;owned\x07\x1b[2J\x00\x20` {
		t.Errorf("X-Pulsar-partition-key = %q", got)
	}
	if b, _ := base64.StdEncoding.DecodeString(resp.Header.Get("X-Pulsar-Base64-partition-key")); string(b) != key {
		t.Errorf("X-Pulsar-Base64-partition-key = %q, want the exact key", b)
	}

	// The oracle: pulsaradmin reads every property exactly.
	msgs, err := e.adm.Subscriptions().PeekMessages(tn, "dlq", 1)
	must(t, err)
	for k, v := range props {
		if got := msgs[0].Properties[k]; got != v {
			t.Errorf("pulsaradmin: property %q = %q, want %q", k, got, v)
		}
	}
	if v, ok := msgs[0].Properties["Reason"]; ok {
		t.Errorf("pulsaradmin: a second, sanitised reason %q", v)
	}

	// client/admin: the key and properties exactly.
	ad, err := admin.New(admin.Options{URL: e.s.URL()})
	must(t, err)
	got, err := ad.PeekAt(ctx, topic, "dlq", 1)
	must(t, err)
	if got[0].Key != key || !maps.Equal(got[0].Properties, props) || string(got[0].Payload) != "p\x1b\x00" {
		t.Errorf("client/admin: key %q properties %q payload %q", got[0].Key, got[0].Properties, got[0].Payload)
	}
}
