package main

// Our client beside the official one: the same headline workload (one producer of 1 KiB
// messages with default batching, one consumer acking every message, on one fresh topic of the
// in-memory broker) driven through each library in turn, with the messages per second each
// reaches and the heap allocations each makes per message in the bench process (producer and
// consumer together; the broker is another process, so none of its allocations count).

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/client"
)

// Targets from the client issue.
const targetClientRatio = 1.2

// clientResult is one library's run over its window.
type clientResult struct {
	window   time.Duration
	sent     int64
	received int64
	mallocs  uint64 // heap objects allocated in the bench process during the window
	bytes    uint64 // and their bytes
	others   float64
	cpu      time.Duration // broker CPU over the window
}

func (r clientResult) recvRate() float64 { return float64(r.received) / r.window.Seconds() }

func (r clientResult) allocsPerMsg() float64 {
	if r.received == 0 {
		return 0
	}
	return float64(r.mallocs) / float64(r.received)
}

func (r clientResult) bytesPerMsg() float64 {
	if r.received == 0 {
		return 0
	}
	return float64(r.bytes) / float64(r.received)
}

// clientsReport is what the comparison measured, round by round.
type clientsReport struct {
	rounds []clientRound
}

// clientRound is one round: our client's run, then the official client's beside it, on the
// same broker; nil: not measured.
type clientRound struct{ ours, official *clientResult }

func roundOurs(cr clientRound) *clientResult     { return cr.ours }
func roundOfficial(cr clientRound) *clientResult { return cr.official }

// results are one library's measured rounds, in order.
func (c *clientsReport) results(which func(clientRound) *clientResult) []*clientResult {
	var out []*clientResult
	for _, cr := range c.rounds {
		if x := which(cr); x != nil {
			out = append(out, x)
		}
	}
	return out
}

// ratios are f of our client's run over f of the official client's, in every round that
// measured both.
func (c *clientsReport) ratios(f func(clientResult) float64) []float64 {
	return perRound(c.rounds, func(cr clientRound) (float64, bool) {
		if cr.ours == nil || cr.official == nil {
			return 0, false
		}
		return ratioOf(f(*cr.ours), f(*cr.official))
	})
}

// clientValues are f of every result.
func clientValues(xs []*clientResult, f func(clientResult) float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = f(*x)
	}
	return out
}

// library is one client library's producer and consumer on a topic.
type library struct {
	name string
	// open creates a client, a consumer (subscribed at the earliest position) and a producer
	// on topic; send publishes one payload, calling done with the receipt's error; receive
	// takes one message and acknowledges it; close releases everything.
	open func(ctx context.Context, url, topic string, shared bool) (*libSession, error)
}

type libSession struct {
	send    func(ctx context.Context, payload []byte, done func(error))
	receive func(ctx context.Context) error
	close   func()
}

var officialLibrary = library{name: "official client", open: func(ctx context.Context, url, topic string, shared bool) (*libSession, error) {
	cl, err := pulsar.NewClient(pulsar.ClientOptions{URL: url, ConnectionTimeout: 5 * time.Second, OperationTimeout: 10 * time.Second, Logger: clientLogger})
	if err != nil {
		return nil, err
	}
	subType := pulsar.Exclusive
	if shared {
		subType = pulsar.Shared
	}
	var cons pulsar.Consumer
	var prod pulsar.Producer
	err = within(ctx, "subscribing", func() (err error) {
		cons, err = cl.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "bench", Type: subType,
			SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
		return err
	})
	if err == nil {
		err = within(ctx, "creating the producer", func() (err error) {
			prod, err = cl.CreateProducer(pulsar.ProducerOptions{Topic: topic, SendTimeout: 10 * time.Second})
			return err
		})
	}
	if err != nil {
		_ = within(ctx, "closing the client", func() error { cl.Close(); return nil })
		return nil, err
	}
	return &libSession{
		send: func(ctx context.Context, payload []byte, done func(error)) {
			prod.SendAsync(ctx, &pulsar.ProducerMessage{Payload: payload}, func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) { done(err) })
		},
		receive: func(ctx context.Context) error {
			m, err := cons.Receive(ctx)
			if err != nil {
				return err
			}
			return cons.Ack(m)
		},
		close: func() {
			_ = within(ctx, "closing the official client", func() error { prod.Close(); cons.Close(); cl.Close(); return nil })
		},
	}, nil
}}

// ourLogger keeps our client's warnings and errors (on stderr).
var ourLogger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

var ourLibrary = library{name: "letterbox client", open: func(ctx context.Context, url, topic string, shared bool) (*libSession, error) {
	cl, err := client.New(client.Options{ServiceURL: url, ConnectionTimeout: 5 * time.Second, OperationTimeout: 10 * time.Second, Logger: ourLogger})
	if err != nil {
		return nil, err
	}
	subType := client.Exclusive
	if shared {
		subType = client.Shared
	}
	sctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	cons, err := cl.Subscribe(sctx, client.ConsumerOptions{Topic: topic, SubscriptionName: "bench", Type: subType, InitialPosition: client.Earliest})
	var prod *client.Producer
	if err == nil {
		prod, err = cl.CreateProducer(sctx, client.ProducerOptions{Topic: topic, SendTimeout: 10 * time.Second})
	}
	if err != nil {
		cl.Close()
		return nil, err
	}
	// SendAsync returns a future; receipts come in order, so one goroutine waits on them in
	// turn and calls each callback, as the official client's own callback goroutine does.
	type pending struct {
		f    *client.SendFuture
		done func(error)
	}
	futures := make(chan pending, 4096)
	waiterDone := make(chan struct{})
	go func() {
		defer close(waiterDone)
		for p := range futures {
			<-p.f.Done()
			_, err := p.f.Result()
			p.done(err)
		}
	}()
	var closeOnce sync.Once
	return &libSession{
		send: func(ctx context.Context, payload []byte, done func(error)) {
			futures <- pending{prod.SendAsync(ctx, &client.Message{Payload: payload}), done}
		},
		receive: func(ctx context.Context) error {
			m, err := cons.Receive(ctx)
			if err != nil {
				return err
			}
			return cons.Ack(m)
		},
		close: func() {
			closeOnce.Do(func() {
				_ = within(ctx, "closing our client", func() error {
					prod.Close()
					close(futures)
					<-waiterDone
					cons.Close()
					return cl.Close()
				})
			})
		},
	}, nil
}}

// runLibrary runs the headline workload through lib against the broker at url (process pid)
// for warm-up + window, and measures the window.
func runLibrary(ctx context.Context, lib library, url string, pid int, shared bool, warmup, window time.Duration) (res clientResult, err error) {
	ctx, cancel := context.WithTimeout(ctx, warmup+window+3*setupTimeout)
	defer cancel()
	topic := fmt.Sprintf("persistent://public/default/bench-clients-%d", time.Now().UnixNano())
	s, err := lib.open(ctx, url, topic, shared)
	if err != nil {
		return res, fmt.Errorf("%s: %w", lib.name, err)
	}
	defer s.close()

	var sent, received, outstanding atomic.Int64
	var errOnce sync.Once
	var firstErr atomic.Pointer[error]
	setErr := func(e error) { errOnce.Do(func() { firstErr.Store(&e) }) }

	wctx, wcancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			if err := s.receive(wctx); err != nil {
				if wctx.Err() == nil {
					setErr(fmt.Errorf("receive: %w", err))
				}
				return
			}
			received.Add(1)
		}
	}()
	payload := make([]byte, payloadSize)
	var stopping atomic.Bool
	done := func(err error) {
		if err == nil {
			sent.Add(1)
		} else if wctx.Err() == nil {
			setErr(fmt.Errorf("send: %w", err))
		}
		outstanding.Add(-1)
	}
	go func() {
		defer wg.Done()
		for !stopping.Load() && wctx.Err() == nil {
			outstanding.Add(1)
			s.send(wctx, payload, done)
		}
	}()
	stop := func() {
		stopping.Store(true)
		deadline := time.Now().Add(setupTimeout)
		for outstanding.Load() > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		wcancel()
		wg.Wait()
	}
	defer stop()

	watch := func(d time.Duration) error {
		end := time.Now().Add(d)
		last, lastAt := received.Load(), time.Now()
		for time.Now().Before(end) {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(min(50*time.Millisecond, time.Until(end))):
			}
			if e := firstErr.Load(); e != nil {
				return *e
			}
			if r := received.Load(); r != last {
				last, lastAt = r, time.Now()
			} else if time.Since(lastAt) > stallLimit {
				return fmt.Errorf("stalled: nothing received for %v (%d sent, %d received)", stallLimit, sent.Load(), received.Load())
			}
		}
		return nil
	}
	if err := watch(warmup); err != nil {
		return res, fmt.Errorf("%s: %w", lib.name, err)
	}
	w := workload{pid: pid}
	cpu0, ours0, busy0, err := w.cpuSample()
	if err != nil {
		return res, err
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	t0, s0, r0 := time.Now(), sent.Load(), received.Load()
	if err := watch(window); err != nil {
		return res, fmt.Errorf("%s: %w", lib.name, err)
	}
	res = clientResult{window: time.Since(t0), sent: sent.Load() - s0, received: received.Load() - r0}
	runtime.ReadMemStats(&m1)
	res.mallocs, res.bytes = m1.Mallocs-m0.Mallocs, m1.TotalAlloc-m0.TotalAlloc
	cpu1, ours1, busy1, err := w.cpuSample()
	if err != nil {
		return res, err
	}
	res.cpu = cpu1 - cpu0
	res.others = max(0, (busy1-busy0)-(ours1-ours0)).Seconds() / res.window.Seconds()
	return res, nil
}

// compareClients alternates the two libraries on the broker b, rounds times each: each round
// runs ours, then the official client beside it.
func compareClients(ctx context.Context, b *brokerProc, o options, window time.Duration, progress func(string, ...any), failed func(string, error)) clientsReport {
	var r clientsReport
	libs := []struct {
		lib  library
		keep func(*clientRound) **clientResult
	}{
		{ourLibrary, func(cr *clientRound) **clientResult { return &cr.ours }},
		{officialLibrary, func(cr *clientRound) **clientResult { return &cr.official }},
	}
	dead := map[string]bool{}
	for i := range o.rounds {
		r.rounds = append(r.rounds, clientRound{})
		for _, l := range libs {
			if ctx.Err() != nil || b == nil || dead[l.lib.name] || b.alive() != nil {
				continue
			}
			name := fmt.Sprintf("%s: producer + consumer [round %d/%d]", l.lib.name, i+1, o.rounds)
			progress("%s (%v)", name, o.warmup+window)
			runtime.GC() // the previous run's garbage is not this one's
			res, err := runLibrary(ctx, l.lib, b.serviceURL, b.pid(), o.subType == "shared", o.warmup, window)
			if err != nil {
				failed(name, err)
				dead[l.lib.name] = true
				continue
			}
			*l.keep(&r.rounds[i]) = &res
		}
	}
	return r
}

// markdown renders the comparison section.
func (c *clientsReport) markdown(b *strings.Builder, r *report) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## Our client beside the official client\n\n")
	p("The headline workload (one producer of %d-byte payloads with default batching, `SendAsync` bounded by each client's default "+
		"of 1,000 messages in flight, and one %s consumer acking every message, on a fresh topic) on the same `letterbox broker --in-memory`, "+
		"%d rounds over a %v window after a %v warm-up, each round through our `client` package and then through the official Go client. "+
		"Each figure is the median of the rounds; the ratios are the median of the rounds' ratios, each round's letterbox run over the "+
		"official run right after it, and the spread is (largest − smallest) / median of the rounds' values. Allocations are the "+
		"`runtime.MemStats` Mallocs of the bench process over the window (producer and consumer together; the broker is another process) "+
		"per message received.\n\n",
		payloadSize, r.subType, r.rounds, r.shortWindow, r.warmup)
	p("| metric | measured | target | |\n|---|---|---|---|\n")
	ours, official := c.results(roundOurs), c.results(roundOfficial)
	busy := func(rs ...*clientResult) string {
		for _, x := range rs {
			if x.others >= busyWarning {
				return " (busy machine)"
			}
		}
		return ""
	}
	verdict := func(met bool, rs ...*clientResult) string {
		if met {
			return "met" + busy(rs...)
		}
		return "not met" + busy(rs...)
	}
	tput := func(name string, xs []*clientResult) {
		if len(xs) == 0 {
			p("| throughput, %s | %s | | |\n", name, notMeasuredText)
			return
		}
		p("| throughput, %s (%s) | %s | | |\n", name, ofRounds(len(xs)), byRound(clientValues(xs, clientResult.recvRate), rate, " msg/s"))
	}
	tput("letterbox client", ours)
	tput("official client", official)
	if ratios := c.ratios(clientResult.recvRate); len(ratios) > 0 {
		p("| letterbox client / official client (%s) | %s | ≥ 1.2× | %s |\n", ofRatios(len(ratios)), byRound(ratios, times, ""),
			verdict(medianF(ratios) >= targetClientRatio, append(slices.Clone(ours), official...)...))
	} else {
		p("| letterbox client / official client | %s | ≥ 1.2× | not measured |\n", notMeasuredText)
	}
	if ratios := c.ratios(clientResult.allocsPerMsg); len(ratios) > 0 {
		med := func(xs []*clientResult, f func(clientResult) float64) float64 { return medianF(clientValues(xs, f)) }
		p("| allocations per message, letterbox / official (%s) | %.1f / %.1f (%.0f / %.0f bytes), medians; ratio %s | fewer than the official client's | %s |\n",
			ofRatios(len(ratios)), med(ours, clientResult.allocsPerMsg), med(official, clientResult.allocsPerMsg),
			med(ours, clientResult.bytesPerMsg), med(official, clientResult.bytesPerMsg), byRound(ratios, times, ""), verdict(medianF(ratios) < 1))
	} else {
		p("| allocations per message, letterbox / official | %s | fewer than the official client's | not measured |\n", notMeasuredText)
	}
	p("\n| run | sent msg/s | received msg/s | notes |\n|---|---|---|---|\n")
	row := func(name string, xs []*clientResult) {
		if len(xs) == 0 {
			p("| %s | %s | | |\n", name, notMeasuredText)
			return
		}
		med := func(f func(clientResult) float64) float64 { return medianF(clientValues(xs, f)) }
		allocs := make([]string, len(xs))
		var others float64
		for i, x := range xs {
			allocs[i] = fmt.Sprintf("%.1f", x.allocsPerMsg())
			others = max(others, x.others)
		}
		p("| %s (%s) | %s | %s | %v window; %.1f allocs and %.0f bytes per message, broker CPU %.2f s, medians of the rounds; "+
			"received msg/s by round: %s; allocs per message by round: %s; other processes used up to %.2f CPUs |\n",
			name, ofRounds(len(xs)), rate(med(func(x clientResult) float64 { return float64(x.sent) / x.window.Seconds() })), rate(med(clientResult.recvRate)),
			xs[0].window.Round(100*time.Millisecond), med(clientResult.allocsPerMsg), med(clientResult.bytesPerMsg),
			med(func(x clientResult) float64 { return x.cpu.Seconds() }), spread(clientValues(xs, clientResult.recvRate), rate), strings.Join(allocs, ", "), others)
	}
	row("letterbox client: producer + consumer", ours)
	row("official client: producer + consumer", official)
}
