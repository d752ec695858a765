package cli

import (
	"context"
	"log/slog"
	"net"
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

// The TUI on a broker letterbox runs for it counts the broker's other clients (q asks before
// stopping it while there are some), not its own connections.
func TestOtherClientsOfTheEmbeddedBroker(t *testing.T) {
	env := brokertest.Start(t)
	src, err := data.NewAdmin(data.AdminOptions{AdminURL: env.AdminURL, ServiceURL: env.ServiceURL})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	app := appSetup{broker: &embedded{b: env.Broker}, dataDir: t.TempDir()}
	opts := app.options(src, discardLogger())
	if opts.OtherClients == nil || opts.DataDir != app.dataDir {
		t.Fatalf("options without the broker's clients or data: %+v", opts)
	}
	ctx := brokertest.Ctx(t, 20*time.Second)
	// The TUI's own connection: a produce.
	if _, err := src.Produce(ctx, "persistent://public/default/own", data.ProduceRequest{Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if n := opts.OtherClients(); n != 0 {
		t.Fatalf("the TUI's own connection counts as %d other clients", n)
	}
	other := env.Client(t)
	if _, err := other.TopicsOfNamespace(ctx, "public/default"); err != nil {
		t.Fatal(err)
	}
	brokertest.WaitFor(t, 5*time.Second, "an application's connection is not counted", func() bool { return opts.OtherClients() == 1 })
	other.Close()
	brokertest.WaitFor(t, 5*time.Second, "a closed connection is still counted", func() bool { return opts.OtherClients() == 0 })
	if (appSetup{}).options(src, discardLogger()).OtherClients != nil {
		t.Error("a TUI on a cluster letterbox does not run asks about its clients")
	}
}
