package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
)

// TestReplayBinarySIGKILL builds letterbox, runs "letterbox broker" and kills
// "letterbox replay" three times mid-run, then lets it finish: with deduplication on the
// origin holds every dead letter exactly once, with it off none is missing.
func TestReplayBinarySIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "letterbox")
	build := exec.Command("go", "build", "-o", bin, "github.com/letterbox-dev/letterbox")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, dedup := range []bool{true, false} {
		t.Run(fmt.Sprintf("dedup=%v", dedup), func(t *testing.T) { killAndResume(t, bin, dedup) })
	}
}

func killAndResume(t *testing.T, bin string, dedup bool) {
	const n = 3000
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	dir := t.TempDir()
	conf := filepath.Join(dir, "broker.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "brokerDeduplicationEnabled=%v\n", dedup), 0o600); err != nil {
		t.Fatal(err)
	}
	br := exec.CommandContext(ctx, bin, "broker", "--data", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--config", conf)
	stdout, err := br.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := br.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { br.Process.Kill(); br.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 3 || f[0] != "ready" {
		t.Fatalf("broker said %q: %v", line, err)
	}
	su, au := f[1], f[2]

	cl, err := client.New(client.Options{ServiceURL: su, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	app, err := cl.Subscribe(ctx, client.ConsumerOptions{Topic: "orders", SubscriptionName: "app", InitialPosition: client.Earliest})
	if err != nil {
		t.Fatal(err)
	}
	p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: "orders-app-DLQ", InitialSubscriptionName: "app-dlq", DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	var futs []*client.SendFuture
	for i := range n {
		futs = append(futs, p.SendAsync(ctx, &client.Message{Payload: fmt.Appendf(nil, "m%d", i), Key: fmt.Sprintf("k%d", i),
			Properties: map[string]string{client.PropertyRealTopic: "persistent://public/default/orders"}}))
	}
	for _, f := range futs {
		if _, err := f.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()

	state := t.TempDir()
	replayCmd := func() *exec.Cmd {
		c := exec.CommandContext(ctx, bin, "replay", "--service-url", su, "--admin-url", au, "--dlq", "orders-app-DLQ", "--json", "--rate", "3000")
		c.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
		return c
	}
	for kill := range 3 {
		c := replayCmd()
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill once it reported 300 messages moved.
		sc := bufio.NewScanner(out)
		moved := 0
		for moved < 300 && sc.Scan() {
			if strings.Contains(sc.Text(), `"action":"moved"`) {
				moved++
			}
		}
		if err := c.Process.Signal(os.Kill); err != nil {
			t.Fatal(err)
		}
		c.Wait()
		t.Logf("kill %d after %d moved", kill+1, moved)
	}
	c := replayCmd()
	c.Args = c.Args[:len(c.Args)-2] // no rate limit
	out, err := c.Output()
	if err != nil {
		t.Fatalf("final run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `"resumed":true`) {
		t.Errorf("final run did not resume: %s", out[strings.LastIndex(string(out[:len(out)-1]), "\n")+1:])
	}

	seen := map[string]int{}
	total := 0
	for len(seen) < n {
		m, err := app.Receive(ctx)
		if err != nil {
			t.Fatalf("%d distinct of %d: %v", len(seen), n, err)
		}
		app.Ack(m)
		seen[m.Key]++
		total++
	}
	qctx, qcancel := context.WithTimeout(ctx, 500*time.Millisecond)
	for {
		m, err := app.Receive(qctx)
		if err != nil {
			break
		}
		seen[m.Key]++
		total++
	}
	qcancel()
	t.Logf("dedup=%v: %d distinct, %d received", dedup, len(seen), total)
	if dedup && total != n {
		t.Errorf("%d messages for %d dead letters: duplicates with deduplication on", total, n)
	}
}
