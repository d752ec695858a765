package broker_test

// Helpers for the acceptance suite that runs the official Go client against an in-process
// broker. Every test starts its own broker (cheap: one listener on 127.0.0.1:0, in-memory
// storage), so tests do not share state and can run in parallel.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
	"github.com/letterbox-dev/letterbox/internal/testwait"
	"google.golang.org/protobuf/encoding/prototext"
)

// testLogWriter forwards log lines to t.Log until the test is finished. Broker and client
// goroutines may still log after the test body returns; t.Log would then panic, so lines
// written after the test's cleanups have run are dropped.
type testLogWriter struct {
	mu     sync.Mutex
	t      testing.TB
	prefix string
	done   bool
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(w.prefix + strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// testLogger returns a Warn-level slog logger writing to t.Log.
func testLogger(t testing.TB, prefix string) *slog.Logger {
	w := &testLogWriter{t: t, prefix: prefix}
	// Registered before the broker's or client's cleanup, so it runs after them (LIFO).
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// noticing is a slog handler that passes records on to next and closes seen at the first
// record whose message is msg, whatever its level: a test waits on it for what the official
// client does on goroutines of its own and says only in its log.
type noticing struct {
	next slog.Handler
	msg  string
	seen chan struct{}
	once *sync.Once
}

// notice returns a logger writing to t.Log as testLogger's does, and a channel closed when
// something logs msg.
func notice(t testing.TB, prefix, msg string) (*slog.Logger, <-chan struct{}) {
	seen := make(chan struct{})
	h := noticing{next: testLogger(t, prefix).Handler(), msg: msg, seen: seen, once: &sync.Once{}}
	return slog.New(h), seen
}

func (h noticing) Enabled(context.Context, slog.Level) bool { return true }

func (h noticing) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.seen) })
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h noticing) WithAttrs(as []slog.Attr) slog.Handler {
	h.next = h.next.WithAttrs(as)
	return h
}

func (h noticing) WithGroup(name string) slog.Handler {
	h.next = h.next.WithGroup(name)
	return h
}

// startBroker starts a broker with upstream defaults, adjusted by mods, and closes it when the
// test ends.
func startBroker(t testing.TB, mods ...func(*broker.Config)) *broker.Broker {
	t.Helper()
	cfg := broker.DefaultConfig()
	cfg.Logger = testLogger(t, "broker: ")
	// A frame buffer reused while something still reads it turns into 0xEE bytes, which the
	// clients' checksums reject: every test doubles as a check of the buffers' counts.
	cfg.PoisonFrameBuffers = true
	for _, m := range mods {
		m(&cfg)
	}
	b, err := broker.New(broker.WithConfig(cfg))
	if err != nil {
		t.Fatalf("start broker: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	tr := &tracer{}
	tracers.Store(b, tr)
	b.Intercept(tr.intercept)
	t.Cleanup(func() {
		tracers.Delete(b)
		if t.Failed() {
			t.Logf("last commands on the broker (newest last):\n%s", tr.dump())
		}
	})
	return b
}

// tracers maps each test broker to its tracer.
var tracers sync.Map // *broker.Broker → *tracer

// tracer keeps the last commands a broker saw, printed when a test fails, and runs the
// test's own interceptors (see intercept).
type tracer struct {
	mu    sync.Mutex
	ring  [300]string
	next  int
	hooks []broker.Interceptor
}

func (tr *tracer) intercept(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
	var line string
	arrow := "→"
	if dir == broker.Outbound {
		arrow = "←"
	}
	switch cmd.GetType() {
	case pb.BaseCommand_PING, pb.BaseCommand_PONG:
	case pb.BaseCommand_MESSAGE:
		m := cmd.GetMessage()
		id := m.GetMessageId()
		line = fmt.Sprintf("%s MESSAGE consumer=%d id=%d:%d redelivery=%d ack_set=%v", arrow, m.GetConsumerId(),
			int64(id.GetLedgerId()), int64(id.GetEntryId()), m.GetRedeliveryCount(), m.GetAckSet())
	case pb.BaseCommand_SEND:
		s := cmd.GetSend()
		line = fmt.Sprintf("%s SEND producer=%d seq=%d n=%d", arrow, s.GetProducerId(), s.GetSequenceId(), s.GetNumMessages())
	case pb.BaseCommand_SEND_RECEIPT:
		r := cmd.GetSendReceipt()
		line = fmt.Sprintf("%s SEND_RECEIPT producer=%d seq=%d id=%d:%d", arrow, r.GetProducerId(), r.GetSequenceId(),
			int64(r.GetMessageId().GetLedgerId()), int64(r.GetMessageId().GetEntryId()))
	default:
		line = arrow + " " + prototext.MarshalOptions{}.Format(cmd)
		if len(line) > 400 {
			line = line[:400] + "…"
		}
	}
	tr.mu.Lock()
	if line != "" {
		tr.ring[tr.next%len(tr.ring)] = time.Now().Format("15:04:05.000 ") + line
		tr.next++
	}
	hooks := tr.hooks
	tr.mu.Unlock()
	for _, h := range hooks {
		if v := h(dir, cmd); v != (broker.Verdict{}) {
			return v
		}
	}
	return broker.Verdict{}
}

func (tr *tracer) dump() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var sb strings.Builder
	start := max(0, tr.next-len(tr.ring))
	for i := start; i < tr.next; i++ {
		sb.WriteString(tr.ring[i%len(tr.ring)])
		sb.WriteByte('\n')
	}
	return sb.String()
}

// intercept adds a test interceptor to a broker made by startBroker; the first one to return
// a non-zero verdict decides.
func intercept(t testing.TB, b *broker.Broker, fn broker.Interceptor) {
	t.Helper()
	v, ok := tracers.Load(b)
	if !ok {
		t.Fatal("intercept: broker not made by startBroker")
	}
	tr := v.(*tracer)
	tr.mu.Lock()
	tr.hooks = append(tr.hooks, fn)
	tr.mu.Unlock()
}

// newClient connects an official Go client to b and closes it when the test ends.
func newClient(t testing.TB, b *broker.Broker) pulsar.Client {
	t.Helper()
	c, err := pulsar.NewClient(pulsar.ClientOptions{
		URL:               b.ServiceURL(),
		OperationTimeout:  10 * time.Second,
		ConnectionTimeout: 5 * time.Second,
		Logger:            plog.NewLoggerWithSlog(testLogger(t, "client: ")),
	})
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// topicName returns a fully qualified persistent topic unique to the test (and suffix).
func topicName(t testing.TB, suffix ...string) string {
	return "persistent://public/default/" + localName(t, suffix...)
}

// localName turns the test name (plus suffix) into a valid topic local name.
func localName(t testing.TB, suffix ...string) string {
	name := strings.Join(append([]string{t.Name()}, suffix...), "-")
	var sb strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			sb.WriteRune(r)
		default:
			sb.WriteRune('-')
		}
	}
	return sb.String()
}

// testCtx returns a context that expires after d and is cancelled when the test ends.
func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// subscribe creates a consumer and closes it when the test ends.
func subscribe(t testing.TB, c pulsar.Client, opts pulsar.ConsumerOptions) pulsar.Consumer {
	t.Helper()
	cons, err := c.Subscribe(opts)
	if err != nil {
		t.Fatalf("subscribe %s/%s: %v", opts.Topic, opts.SubscriptionName, err)
	}
	t.Cleanup(cons.Close)
	return cons
}

// createProducer creates a producer and closes it when the test ends.
func createProducer(t testing.TB, c pulsar.Client, opts pulsar.ProducerOptions) pulsar.Producer {
	t.Helper()
	p, err := c.CreateProducer(opts)
	if err != nil {
		t.Fatalf("create producer on %s: %v", opts.Topic, err)
	}
	t.Cleanup(p.Close)
	return p
}

// sendN sends n messages synchronously with payload "<prefix><i>" and returns their ids.
func sendN(t testing.TB, p pulsar.Producer, prefix string, n int) []pulsar.MessageID {
	t.Helper()
	ctx := testCtx(t, 20*time.Second)
	ids := make([]pulsar.MessageID, n)
	for i := range n {
		id, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "%s%d", prefix, i)})
		if err != nil {
			t.Fatalf("send %s%d: %v", prefix, i, err)
		}
		ids[i] = id
	}
	return ids
}

// receiveN receives exactly n messages within timeout, failing the test otherwise.
func receiveN(t testing.TB, c pulsar.Consumer, n int, timeout time.Duration) []pulsar.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	msgs := make([]pulsar.Message, 0, n)
	for len(msgs) < n {
		m, err := c.Receive(ctx)
		if err != nil {
			t.Fatalf("receive: got %d of %d messages within %v: %v", len(msgs), n, timeout, err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// receiveOne receives one message within timeout.
func receiveOne(t testing.TB, c pulsar.Consumer, timeout time.Duration) pulsar.Message {
	t.Helper()
	return receiveN(t, c, 1, timeout)[0]
}

// expectNothing proves that c receives nothing for d: a receive with a deadline, not a sleep.
func expectNothing(t testing.TB, c pulsar.Consumer, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	m, err := c.Receive(ctx)
	if err == nil {
		t.Fatalf("expected no message for %v, got %q (id %v, redelivery %d)", d, m.Payload(), m.ID(), m.RedeliveryCount())
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("expected a receive timeout, got %v", err)
	}
}

// payloads returns the payloads of msgs as strings.
func payloads(msgs []pulsar.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Payload())
	}
	return out
}

// waitFor polls cond until it holds or timeout passes.
func waitFor(t testing.TB, timeout time.Duration, cond func() bool) {
	t.Helper()
	testwait.For(t, timeout, "condition not met", cond)
}

// sameEntry reports whether a and b name the same ledger entry.
func sameEntry(a, b pulsar.MessageID) bool {
	return a.LedgerID() == b.LedgerID() && a.EntryID() == b.EntryID()
}

// sendAll publishes msgs with SendAsync (so the producer batches them), flushes, waits for
// every receipt and fails the test on the first send error. It returns the message ids.
func sendAll(t testing.TB, p pulsar.Producer, msgs []*pulsar.ProducerMessage, timeout time.Duration) []pulsar.MessageID {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ids := make([]pulsar.MessageID, len(msgs))
	errs := make([]error, len(msgs))
	var wg sync.WaitGroup
	for i, m := range msgs {
		wg.Add(1)
		p.SendAsync(ctx, m, func(id pulsar.MessageID, _ *pulsar.ProducerMessage, err error) {
			ids[i], errs[i] = id, err
			wg.Done()
		})
	}
	if err := p.FlushWithCtx(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("send #%d: %v", i, err)
		}
	}
	return ids
}

// rawProducer registers a producer on c with an optional topic purpose and initial
// subscription, and returns the broker's answer (PRODUCER_SUCCESS or ERROR).
func rawProducer(c *rawConn, topic, purpose, initialSub string) *pb.BaseCommand {
	id := c.id()
	p := &pb.CommandProducer{Topic: &topic, ProducerId: &id, RequestId: &id}
	if purpose != "" {
		p.TopicPurpose = &purpose
	}
	if initialSub != "" {
		p.InitialSubscriptionName = &initialSub
	}
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_PRODUCER.Enum(), Producer: p})
	for {
		f := c.next()
		switch f.Cmd.GetType() {
		case pb.BaseCommand_PRODUCER_SUCCESS, pb.BaseCommand_ERROR:
			return f.Cmd
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
