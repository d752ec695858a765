package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestBinaryLeavesOutTheClusterFixture: the broker's front ends and ownership, the hook only
// internal/clustertest uses, are built with the clustertest tag alone; the binary, built as
// users build it, holds none of their symbols.
func TestBinaryLeavesOutTheClusterFixture(t *testing.T) {
	bin := letterbox(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "tool", "nm", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool nm: %v\n%s", err, out)
	}
	const broker = "github.com/letterbox-dev/letterbox/broker."
	fixture := []string{
		broker + "(*Broker).SetOwnership",
		broker + "(*Broker).Serve",
		broker + "hostPort",
		"github.com/letterbox-dev/letterbox/internal/clustertest.",
	}
	found := 0
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, broker+"(*Broker).Close") {
			found++ // the listing is the binary's: a symbol every build holds is in it
		}
		for _, sym := range fixture {
			if strings.Contains(line, sym) {
				t.Errorf("the binary holds %s (%s)", sym, strings.TrimSpace(line))
			}
		}
	}
	if found == 0 {
		t.Fatalf("go tool nm lists no %s(*Broker).Close: not the symbols of the binary?\n%.2000s", broker, out)
	}
}
