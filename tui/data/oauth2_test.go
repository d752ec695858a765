package data

import (
	"context"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/oauth2"
	"github.com/letterbox-dev/letterbox/client/oauth2/oauth2test"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// With OAuth2 client credentials the TUI's source reads the admin API and tails across token
// expiries: each admin call and each binary-protocol challenge gets a token of its moment.
func TestAdminWithOAuth2AcrossExpiries(t *testing.T) {
	t.Parallel()
	is := oauth2test.Start(t, 2*time.Second)
	is.AddClient("tui", "s3cret", "tui")
	// internal/brokertest, not pulsartest: the refresh check goes below broker.conf's seconds.
	env := brokertest.Start(t, func(c *broker.Config) {
		c.AuthenticationEnabled, c.AuthorizationEnabled = true, true
		c.TokenPublicKey = "file://" + is.PublicKeyFile
		c.SuperUserRoles = []string{"tui"}
		c.AuthenticationRefreshCheck = 200 * time.Millisecond
	})
	ts, err := oauth2.NewTokenSource(oauth2.Config{IssuerURL: is.URL, PrivateKey: oauth2test.CredentialsFile(t, "tui", "s3cret", "")})
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAdmin(AdminOptions{AdminURL: env.AdminURL, ServiceURL: env.ServiceURL, TokenSource: ts})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	topic := "persistent://public/default/oauth2-tail"
	if _, err := a.Produce(ctx, topic, ProduceRequest{Payload: []byte("first")}); err != nil {
		t.Fatalf("produce with OAuth2: %v", err)
	}
	events, stop, err := a.Tail(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	// Past two token lifetimes: admin calls and the tail keep working.
	deadline := time.Now().Add(5 * time.Second)
	for i := 0; time.Now().Before(deadline); i++ {
		if _, err := a.TopicDetail(ctx, topic); err != nil {
			t.Fatalf("admin call %d, %v into the session: %v", i, time.Until(deadline), err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if _, err := a.Produce(ctx, topic, ProduceRequest{Payload: []byte("late")}); err != nil {
		t.Fatalf("produce after the first tokens expired: %v", err)
	}
	for {
		select {
		case ev, ok := <-events:
			if !ok || ev.Err != nil {
				t.Fatalf("the tail ended: %v", ev.Err)
			}
			if ev.Link == LinkLost {
				t.Fatal("the tail lost its broker across a token renewal")
			}
			if string(ev.Msg.Payload) == "late" {
				if is.Issued() < 3 {
					t.Errorf("%d tokens issued over 3 lifetimes", is.Issued())
				}
				return
			}
		case <-ctx.Done():
			t.Fatal("the message sent after the expiries never reached the tail")
		}
	}
}
