package data

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/pulsartest"
)

// TestAdminWithTokenAndTLS: the TUI's source reaches a broker that requires a token and speaks
// TLS on both listeners, through the admin API (https) and the binary protocol (pulsar+ssl),
// and is refused without the token.
func TestAdminWithTokenAndTLS(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t, pulsartest.TokenAuth(), pulsartest.TLS())
	if !strings.HasPrefix(b.AdminURL(), "https://") || !strings.HasPrefix(b.ServiceURL(), "pulsar+ssl://") {
		t.Fatalf("listeners %s %s: want TLS on both", b.AdminURL(), b.ServiceURL())
	}

	pem, err := os.ReadFile(b.CAFile())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	httpc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	open := func(token string) *Admin {
		a, err := NewAdmin(AdminOptions{AdminURL: b.AdminURL(), ServiceURL: b.ServiceURL(), Token: token,
			TLSTrustCertsFile: b.CAFile(), HTTPClient: httpc})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(a.Close)
		return a
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const topic = "persistent://public/default/secure"

	super, err := b.Token(pulsartest.SuperUser)
	if err != nil {
		t.Fatal(err)
	}
	a := open(super)
	// A tail reads: it never creates the topic it is asked for.
	if _, _, err := a.Tail(ctx, topic); !IsNotFound(err) {
		t.Fatalf("tail of a topic that does not exist: %v, want not found", err)
	}
	if names, err := a.ac.Topics(ctx, "public/default", true); err != nil || len(names) != 0 {
		t.Fatalf("after the tail: topics %v, %v; want none", names, err)
	}
	if err := a.ac.CreateTopic(ctx, topic, 0, nil); err != nil {
		t.Fatal(err)
	}
	msgs, stop, err := a.Tail(ctx, topic)
	if err != nil {
		t.Fatalf("tail over pulsar+ssl with a token: %v", err)
	}
	defer stop()
	if _, err := a.Produce(ctx, topic, ProduceRequest{Payload: []byte("over TLS")}); err != nil {
		t.Fatalf("produce over pulsar+ssl with a token: %v", err)
	}
	select {
	case ev := <-msgs:
		m := ev.Msg
		if string(m.Payload) != "over TLS" {
			t.Errorf("tailed %q", m.Payload)
		}
	case <-ctx.Done():
		t.Fatal("tail got nothing")
	}
	rows, err := a.Topics(ctx, "public/default")
	if err != nil {
		t.Fatalf("topics over https with a token: %v", err)
	}
	if len(rows) == 0 {
		t.Fatal("no topics listed")
	}

	// Without the token the admin API answers 401, which the source reports.
	if _, err := open("").Topics(ctx, "public/default"); err == nil {
		t.Fatal("listed topics without a token")
	}
}
