package broker_test

// The crash test: the real binary, SIGKILLed at random while the official client
// publishes, restarted five times on the same data directory.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
)

// TestDurableSIGKILL publishes with one official client while the broker process is killed
// five times; the client reconnects to each new process (same port, same data directory) and
// resends what was not receipted, as it would against a crashed upstream broker. Then the topic
// is read back from the start. With deduplication every receipted message is there exactly once,
// in order, and nothing else is; without it, nothing receipted is missing and the only
// duplicates are of messages that were in flight at a kill.
func TestDurableSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary; skipped with -short")
	}
	bin := buildLetterbox(t)
	for _, dedup := range []bool{true, false} {
		name := "dedup-off"
		if dedup {
			name = "dedup-on"
		}
		t.Run(name, func(t *testing.T) { killRounds(t, bin, dedup) })
	}
}

// killMaxMessages bounds one run's messages (the record of what happened to each is an array).
const killMaxMessages = 1 << 20

// Message states in killRun.state.
const (
	msgUnsent int32 = iota
	msgInFlight
	msgReceipted
	msgFailed
)

func killRounds(t *testing.T, bin string, dedup bool) {
	dir := t.TempDir()
	var args []string
	if dedup {
		conf := filepath.Join(t.TempDir(), "broker.conf")
		if err := os.WriteFile(conf, []byte("brokerDeduplicationEnabled=true\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args = []string{"--config", conf}
	}
	topic := topicName(t)

	// The subscription that keeps everything (the default policy keeps nothing for a topic
	// without one) is made on a first broker that is stopped gracefully, so that this test does
	// not depend on how soon a new subscription becomes durable.
	proc := startLetterbox(t, bin, dir, "127.0.0.1:0", args...)
	port := proc.port()
	c := newProcClient(t, proc.url)
	sub, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "keep",
		SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	sub.Close()
	c.Close()
	proc.stop(t)

	proc = startLetterbox(t, bin, dir, port, args...)
	c = newProcClient(t, proc.url)
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, Name: "kill-producer", SendTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("create producer: %v", err)
	}
	defer p.Close()

	run := &killRun{state: make([]atomic.Int32, killMaxMessages)}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	pubDone := make(chan struct{})
	go func() {
		defer close(pubDone)
		run.publish(ctx, p)
	}()
	defer func() { run.stopping.Store(true); cancel(); <-pubDone }()

	// inFlightAtKill holds every message neither receipted nor failed once a killed process is
	// gone: only these may have been stored without their receipt, and be stored again.
	inFlightAtKill := make(map[int]bool)
	for round := range 5 {
		run.waitProgress(t, 20*time.Second)
		select {
		case <-time.After(time.Duration(100+rand.IntN(300)) * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("out of time")
		}
		proc.kill()
		n := 0
		for i := range int(run.next.Load()) {
			if run.state[i].Load() == msgInFlight {
				inFlightAtKill[i] = true
				n++
			}
		}
		t.Logf("round %d: killed with %d sent, %d receipted, %d in flight", round, run.next.Load(), run.receipted.Load(), n)
		proc = startLetterbox(t, bin, dir, port, args...)
	}
	// Once the last process has taken some messages, stop publishing and let every send
	// finish (receipted, or failed by the client).
	run.waitProgress(t, 20*time.Second)
	run.stopping.Store(true)
	<-pubDone
	if err := p.FlushWithCtx(testCtx(t, 30*time.Second)); err != nil {
		t.Fatalf("flush: %v", err)
	}
	sent := int(run.next.Load())
	waitFor(t, 35*time.Second, func() bool {
		for i := range sent {
			if run.state[i].Load() == msgInFlight {
				return false
			}
		}
		return true
	})
	if sent == killMaxMessages {
		t.Fatalf("published the most this test can track (%d); make the rounds shorter", sent)
	}

	stored := readTopic(t, c, topic, 30*time.Second)
	count := make(map[int]int, len(stored))
	firstSeen := make([]int, 0, len(stored))
	dups := 0
	for _, i := range stored {
		if i < 0 || i >= sent {
			t.Fatalf("the topic holds message %d, which was never sent (%d were)", i, sent)
		}
		if count[i]++; count[i] == 1 {
			firstSeen = append(firstSeen, i)
		} else {
			dups++
		}
	}
	receipted := 0
	for i := range sent {
		if run.state[i].Load() == msgReceipted {
			receipted++
			if count[i] == 0 {
				t.Errorf("receipted message %d is missing", i)
			}
		}
	}
	for k := 1; k < len(firstSeen); k++ {
		if firstSeen[k] <= firstSeen[k-1] {
			t.Fatalf("out of order: message %d stored after %d", firstSeen[k], firstSeen[k-1])
		}
	}
	for i, n := range count {
		switch {
		case n > 1 && dedup:
			t.Errorf("with deduplication, message %d is stored %d times", i, n)
		case n > 1 && !inFlightAtKill[i]:
			t.Errorf("message %d is stored %d times but was not in flight at a kill", i, n)
		}
	}
	t.Logf("%d sent, %d receipted, %d failed by the client, %d stored (%d distinct, %d duplicates), %d in flight at a kill",
		sent, receipted, run.failed.Load(), len(stored), len(firstSeen), dups, len(inFlightAtKill))
}

// killRun is one producer's record: what happened to each message it was handed.
type killRun struct {
	state     []atomic.Int32 // by message index: msgUnsent … msgFailed
	next      atomic.Int64   // messages handed to SendAsync so far
	receipted atomic.Int64
	failed    atomic.Int64
	stopping  atomic.Bool
}

// publish sends message after message, as fast as the client takes them, until stopping.
func (r *killRun) publish(ctx context.Context, p pulsar.Producer) {
	pad := strings.Repeat("x", 100)
	for i := 0; !r.stopping.Load() && ctx.Err() == nil; i++ {
		if i == len(r.state) {
			return
		}
		r.state[i].Store(msgInFlight)
		r.next.Store(int64(i + 1))
		p.SendAsync(ctx, &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "%d %s", i, pad)},
			func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) {
				if err != nil {
					r.state[i].Store(msgFailed)
					r.failed.Add(1)
					return
				}
				r.state[i].Store(msgReceipted)
				r.receipted.Add(1)
			})
	}
}

// waitProgress waits until at least one more message has been receipted.
func (r *killRun) waitProgress(t *testing.T, timeout time.Duration) {
	t.Helper()
	from := r.receipted.Load()
	waitFor(t, timeout, func() bool { return r.receipted.Load() > from })
}

// readTopic reads topic from its first stored message to its last and returns the message
// indexes the payloads start with, in order.
func readTopic(t *testing.T, c pulsar.Client, topic string, timeout time.Duration) []int {
	t.Helper()
	r, err := c.CreateReader(pulsar.ReaderOptions{Topic: topic, StartMessageID: pulsar.EarliestMessageID()})
	if err != nil {
		t.Fatalf("create reader: %v", err)
	}
	defer r.Close()
	ctx := testCtx(t, timeout)
	var out []int
	for r.HasNext() {
		m, err := r.Next(ctx)
		if err != nil {
			t.Fatalf("read back (%d so far): %v", len(out), err)
		}
		var i int
		if _, err := fmt.Sscanf(string(m.Payload()), "%d ", &i); err != nil {
			t.Fatalf("unexpected payload %q", m.Payload())
		}
		out = append(out, i)
	}
	return out
}

// newProcClient connects an official client to a broker process. Its close waits for nothing
// the test still needs, so callers close it themselves when they restart the broker.
func newProcClient(t *testing.T, url string) pulsar.Client {
	t.Helper()
	c, err := pulsar.NewClient(pulsar.ClientOptions{
		URL:               url,
		OperationTimeout:  10 * time.Second,
		ConnectionTimeout: 2 * time.Second,
		Logger:            plog.NewLoggerWithSlog(testLogger(t, "client: ")),
	})
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// buildLetterbox builds the letterbox binary into a directory of the test's.
func buildLetterbox(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("locating the module: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "letterbox")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// letterboxProc is a running `letterbox broker`.
type letterboxProc struct {
	cmd    *exec.Cmd
	url    string // pulsar://HOST:PORT
	stderr *tailBuffer
	exited chan struct{}
}

// startLetterbox runs `letterbox broker` on dir, its binary protocol on listen, and waits for
// its ready line. A port just freed by a killed broker may take a moment to bind again.
func startLetterbox(t *testing.T, bin, dir, listen string, extra ...string) *letterboxProc {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, err := tryStartLetterbox(t, bin, dir, listen, extra)
		if err == nil {
			return p
		}
		if time.Now().After(deadline) || !strings.Contains(err.Error(), "address already in use") {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func tryStartLetterbox(t *testing.T, bin, dir, listen string, extra []string) (*letterboxProc, error) {
	args := append([]string{"broker", "--listen", listen, "--http", "127.0.0.1:0", "--data", dir}, extra...)
	p := &letterboxProc{cmd: exec.Command(bin, args...), stderr: &tailBuffer{max: 16 << 10}, exited: make(chan struct{})}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.cmd.Stderr = p.stderr
	// Should the test binary die, take the broker with it.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- line
		io.Copy(io.Discard, out)
	}()
	go func() {
		p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(p.kill)
	select {
	case line := <-ready:
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "ready" || !strings.HasPrefix(f[1], "pulsar://") {
			p.kill()
			return nil, fmt.Errorf("broker printed %q; stderr:\n%s", line, p.stderr)
		}
		p.url = f[1]
		return p, nil
	case <-time.After(10 * time.Second):
		p.kill()
		return nil, fmt.Errorf("broker not ready after 10s; stderr:\n%s", p.stderr)
	}
}

// port returns the binary protocol's host:port.
func (p *letterboxProc) port() string { return strings.TrimPrefix(p.url, "pulsar://") }

// kill SIGKILLs the process and waits until it is gone. Safe to call twice.
func (p *letterboxProc) kill() {
	p.cmd.Process.Kill()
	<-p.exited
}

// stop asks the broker to stop (SIGTERM) and fails the test unless it exits cleanly.
func (p *letterboxProc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.kill()
		t.Fatalf("broker still running 10s after SIGTERM; stderr:\n%s", p.stderr)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("broker exited with %d; stderr:\n%s", code, p.stderr)
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// A subscription exists once SUBSCRIBE has succeeded, as upstream's cursor does once it is in
// the metadata store: a broker killed right after must still have it on restart, and keep the
// messages published to it since.
func TestDurableSubscriptionSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills the real binary; skipped with -short")
	}
	bin := buildLetterbox(t)
	dir := t.TempDir()
	topic := topicName(t)
	proc := startLetterbox(t, bin, dir, "127.0.0.1:0")
	// A short operation timeout: this client is closed while its broker is dead.
	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: proc.url, OperationTimeout: 500 * time.Millisecond,
		ConnectionTimeout: 500 * time.Millisecond, Logger: plog.NewLoggerWithSlog(testLogger(t, "client: "))})
	if err != nil {
		t.Fatal(err)
	}
	cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	proc.kill()
	cons.Close()
	c.Close()

	proc = startLetterbox(t, bin, dir, "127.0.0.1:0")
	c2 := newProcClient(t, proc.url)
	p, err := c2.CreateProducer(pulsar.ProducerOptions{Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Send(testCtx(t, 10*time.Second), &pulsar.ProducerMessage{Payload: []byte("kept")}); err != nil {
		t.Fatal(err)
	}
	// Were "s" lost, this would create it at the end of the topic, after "kept".
	cons2, err := c2.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	if err != nil {
		t.Fatalf("subscribe after restart: %v", err)
	}
	defer cons2.Close()
	m, err := cons2.Receive(testCtx(t, 2*time.Second))
	if err != nil {
		t.Fatalf("the subscription made before the kill does not have the message published after it: %v", err)
	}
	if string(m.Payload()) != "kept" {
		t.Fatalf("got %q, want kept", m.Payload())
	}
}
