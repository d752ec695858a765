package cli

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// TestServesPulsar: a broker is recognised, a port nobody listens on or a listener that
// does not speak Pulsar is not.
func TestServesPulsar(t *testing.T) {
	t.Parallel()
	quiet := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	b := brokertest.StartBroker(t)
	if !servesPulsar(ctx, b.Addr(), quiet) {
		t.Errorf("the broker at %s is not recognised", b.Addr())
	}

	// Something that accepts connections and never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	if servesPulsar(ctx, l.Addr().String(), quiet) {
		t.Error("a silent listener is taken for Pulsar")
	}

	free, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := free.Addr().String()
	free.Close()
	if servesPulsar(ctx, addr, quiet) {
		t.Error("a closed port is taken for Pulsar")
	}
}

// The TUI on a broker letterbox runs counts the broker's other clients (q asks before stopping
// it while there are some): their binary-protocol connections and the admin clients of the
// last 30 s, not its own of either.
func TestOtherClientsOfTheEmbeddedBroker(t *testing.T) {
	env := brokertest.Start(t)
	self := &selfConns{}
	src, err := data.NewAdmin(data.AdminOptions{AdminURL: env.AdminURL, ServiceURL: env.ServiceURL, HTTPClient: self.httpClient()})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	app := appSetup{broker: &embedded{b: env.Broker, w: env.Web}, self: self, dataDir: t.TempDir()}
	opts := app.options(src, discardLogger())
	if opts.Others == nil || opts.DataDir != app.dataDir {
		t.Fatalf("options without the broker's clients or data: %+v", opts)
	}
	ctx := brokertest.Ctx(t, 20*time.Second)
	// The TUI's own connections: a produce, and admin requests.
	if _, err := src.Produce(ctx, "persistent://public/default/own", data.ProduceRequest{Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Topics(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if o := opts.Others(); o.Any() {
		t.Fatalf("the TUI's own connections count as others: %+v", o)
	}
	other := env.Client(t)
	if _, err := other.TopicsOfNamespace(ctx, "public/default"); err != nil {
		t.Fatal(err)
	}
	brokertest.WaitFor(t, 5*time.Second, "an application's connection is not counted", func() bool { return opts.Others().Connections == 1 })
	other.Close()
	brokertest.WaitFor(t, 5*time.Second, "a closed connection is still counted", func() bool { return opts.Others().Connections == 0 })

	// An admin client (pulsar-admin, a script) holds no connection between its calls: its
	// requests of the last 30 s count.
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(env.AdminURL + "/admin/v2/clusters")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if o := opts.Others(); o.AdminClients != 1 || o.AdminWithin != adminWithin {
		t.Errorf("after another client's admin request: %+v", o)
	}
	if (appSetup{}).options(src, discardLogger()).Others != nil {
		t.Error("a TUI on a cluster letterbox does not run asks about its clients")
	}
}
