package cli

import (
	"context"
	"log/slog"
	"net"
	"testing"

	"github.com/letterbox-dev/letterbox/broker"
)

// TestServesPulsar: a broker is recognised, a port nobody listens on or a listener that
// does not speak Pulsar is not.
func TestServesPulsar(t *testing.T) {
	t.Parallel()
	quiet := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	b, err := broker.New(broker.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
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
