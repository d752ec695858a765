package data

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

// An upstream broker writes a letter's key into a peek's headers as it is; a key holding a
// control character makes that answer unreadable to Go's HTTP client. The DLQ's other letters
// are still peeked, and the one that is not says why in its place.
func TestPeekUnreadableLetterKeepsTheOthers(t *testing.T) {
	t.Parallel()
	env := pulsartest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const dlq = "persistent://public/default/orders-billing-DLQ"
	if err := env.Admin().CreateTopic(ctx, dlq, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := env.Admin().CreateSubscription(ctx, dlq, "keep", adminapi.Earliest); err != nil {
		t.Fatal(err)
	}
	// As an upstream broker would answer the peek of position 2: its key raw.
	target, _ := url.Parse(env.AdminURL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(r *http.Response) error {
		if strings.HasSuffix(r.Request.URL.Path, "/subscription/keep/position/2") {
			r.Header.Set("X-Pulsar-partition-key", "k\x1b]0;owned\x07")
		}
		return nil
	}
	upstream := httptest.NewServer(proxy)
	t.Cleanup(upstream.Close)
	a, err := NewAdmin(AdminOptions{AdminURL: upstream.URL, ServiceURL: env.ServiceURL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	for _, k := range []string{"k1", "k2", "k3"} {
		if _, err := a.Produce(ctx, dlq, ProduceRequest{Key: k, Payload: []byte(k)}); err != nil {
			t.Fatal(err)
		}
	}

	msgs, err := a.Peek(ctx, dlq, "keep", 1, 10)
	if err != nil {
		t.Fatalf("peek: %v", err)
	}
	if len(msgs) != 3 || msgs[0].Key != "k1" || msgs[2].Key != "k3" || msgs[2].Position != 3 {
		t.Fatalf("peek: %+v; want k1, the unreadable one, k3", msgs)
	}
	if u := msgs[1]; u.Unreadable == "" || u.Position != 2 || u.ID != "" || !strings.Contains(u.Unreadable, "malformed MIME header") {
		t.Errorf("the unreadable letter: %+v", u)
	}
}
