package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	pulsarlog "github.com/apache/pulsar-client-go/pulsar/log"
)

const (
	payloadSize = 1 << 10
	// stallLimit is how long a run may go without progress before it fails.
	stallLimit = 5 * time.Second
	// setupTimeout bounds creating the client, producer and consumer, and draining at the end.
	setupTimeout = 15 * time.Second
)

// workload is one run of the official client against a broker.
type workload struct {
	name    string
	url     string
	subType pulsar.SubscriptionType
	produce bool
	consume bool
	// keep subscribes without reading, so that retention keeps everything produced.
	keep bool
	// topic is the topic to use; empty: a new one.
	topic string
	// rate paces the producer at this many messages per second and records publish latency;
	// 0 publishes as fast as the client allows.
	rate   int
	warmup time.Duration
	window time.Duration
	// pid, when set, is the broker process whose CPU time the window is charged.
	pid int
}

// result is what a run measured over its window (warm-up excluded).
type result struct {
	window   time.Duration
	sent     int64 // messages whose SendAsync callback reported success
	received int64 // messages received (and acked) by the consumer
	cpu      time.Duration
	// paced is how many messages the pacer handed to SendAsync in the window.
	paced int64
	// others is the CPU that processes other than the bench and the broker used during the
	// window, in cores: the machine was not idle.
	others float64
	// batchMsgs is the mean number of messages per SEND, when the null broker counted them.
	batchMsgs float64
	// latencies are the publish latencies of messages sent during the window, sorted.
	latencies []time.Duration
}

func (r result) sendRate() float64 { return float64(r.sent) / r.window.Seconds() }
func (r result) recvRate() float64 { return float64(r.received) / r.window.Seconds() }

// cpuPerMsg is the broker CPU time per message received end to end.
func (r result) cpuPerMsg() time.Duration {
	if r.received == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.received)
}

func (r result) percentile(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[int(p*float64(len(r.latencies)-1))]
}

// clientLogger keeps the official client's warnings and errors (on stderr) and drops the rest.
var clientLogger = pulsarlog.NewLoggerWithSlog(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))

// run performs w with a fresh client on a fresh topic. It fails, rather than hangs, when the
// broker stops making progress.
func (w workload) run(ctx context.Context) (res result, err error) {
	ctx, cancel := context.WithTimeout(ctx, w.warmup+w.window+3*setupTimeout)
	defer cancel()
	fail := func(err error) (result, error) { return result{}, fmt.Errorf("%s: %w", w.name, err) }

	client, err := pulsar.NewClient(pulsar.ClientOptions{
		URL:               w.url,
		ConnectionTimeout: 5 * time.Second,
		OperationTimeout:  10 * time.Second,
		Logger:            clientLogger,
	})
	if err != nil {
		return fail(err)
	}
	defer func() {
		if cerr := within(ctx, "closing the client", func() error { client.Close(); return nil }); cerr != nil && err == nil {
			res, err = fail(cerr)
		}
	}()
	topic := w.topic
	if topic == "" {
		topic = fmt.Sprintf("persistent://public/default/bench-%d", time.Now().UnixNano())
	}

	var c counts
	if w.consume {
		stop, err := w.startConsumer(ctx, client, topic, &c)
		if err != nil {
			return fail(err)
		}
		defer stop()
	}
	if w.keep {
		if err := keepSubscription(ctx, client, topic); err != nil {
			return fail(err)
		}
	}
	p := &producing{stop: func() error { return nil }}
	if w.produce {
		if p, err = w.startProducer(ctx, client, topic, &c); err != nil {
			return fail(err)
		}
		defer p.cancel()
		defer func() {
			if perr := p.stop(); perr != nil && err == nil {
				res, err = fail(perr)
			}
		}()
	}

	if res, err = w.measure(ctx, &c, p); err != nil {
		return fail(err)
	}
	return res, nil
}

// counts is what a run's producer and consumer report as they go, and the first error either
// met.
type counts struct {
	received, sent, outstanding atomic.Int64

	errMu    sync.Mutex
	firstErr error
}

func (c *counts) setErr(e error) {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	if c.firstErr == nil {
		c.firstErr = e
	}
}

func (c *counts) err() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.firstErr
}

// startConsumer subscribes to topic and receives and acknowledges until the stop it returns,
// which waits for the receiver and closes the consumer.
func (w workload) startConsumer(ctx context.Context, client pulsar.Client, topic string, c *counts) (stop func(), err error) {
	var consumer pulsar.Consumer
	if err := within(ctx, "subscribing", func() (err error) {
		consumer, err = client.Subscribe(pulsar.ConsumerOptions{
			Topic: topic, SubscriptionName: "bench", Type: w.subType,
			SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest,
		})
		return err
	}); err != nil {
		return nil, err
	}
	cctx, ccancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			msg, err := consumer.Receive(cctx)
			if err != nil {
				if cctx.Err() == nil {
					c.setErr(fmt.Errorf("receive: %w", err))
				}
				return
			}
			if err := consumer.Ack(msg); err != nil {
				c.setErr(fmt.Errorf("ack: %w", err))
				return
			}
			c.received.Add(1)
		}
	}()
	return func() {
		ccancel()
		<-done
		_ = within(ctx, "closing the consumer", func() error { consumer.Close(); return nil })
	}, nil
}

// keepSubscription creates a subscription that reads nothing, so that retention keeps
// everything produced.
func keepSubscription(ctx context.Context, client pulsar.Client, topic string) error {
	return within(ctx, "subscribing", func() error {
		consumer, err := client.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "keep"})
		if err == nil {
			consumer.Close()
		}
		return err
	})
}

// producing is a run's producer at work.
type producing struct {
	// latencies[i] is the publish latency of the i-th paced message; paced counts the
	// messages the pacer has handed to SendAsync so far.
	latencies []time.Duration
	paced     atomic.Int64
	// stop lets the sends in flight finish and closes the producer; it does so once, and
	// later calls return nil. cancel fails the sends still in flight.
	stop   func() error
	cancel context.CancelFunc
}

// startProducer creates a producer on topic and sends, paced at w.rate or as fast as the
// client allows, until p.stop.
func (w workload) startProducer(ctx context.Context, client pulsar.Client, topic string, c *counts) (*producing, error) {
	var producer pulsar.Producer
	if err := within(ctx, "creating the producer", func() (err error) {
		producer, err = client.CreateProducer(pulsar.ProducerOptions{Topic: topic, SendTimeout: 10 * time.Second})
		return err
	}); err != nil {
		return nil, err
	}
	p := &producing{}
	if w.rate > 0 {
		p.latencies = make([]time.Duration, int(float64(w.rate)*(w.warmup+w.window+stallLimit).Seconds()))
	}
	// Stopping sets stopping and lets sends in flight finish; cancelling sctx, which fails
	// them, is for a broker that no longer answers.
	sctx, scancel := context.WithCancel(ctx)
	p.cancel = scancel
	var stopping atomic.Bool
	done := make(chan struct{})
	payload := make([]byte, payloadSize)
	send := func(i int) {
		c.outstanding.Add(1)
		t0 := time.Now()
		producer.SendAsync(sctx, &pulsar.ProducerMessage{Payload: payload}, func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) {
			switch {
			case err == nil:
				if i >= 0 {
					p.latencies[i] = time.Since(t0)
				}
				c.sent.Add(1)
			case sctx.Err() == nil:
				c.setErr(fmt.Errorf("send: %w", err))
			}
			c.outstanding.Add(-1)
		})
	}
	go func() {
		defer close(done)
		if w.rate == 0 {
			for !stopping.Load() && sctx.Err() == nil {
				send(-1)
			}
			return
		}
		pace(sctx, &stopping, w.rate, len(p.latencies), func(i int) { send(i); p.paced.Store(int64(i + 1)) })
	}()
	p.stop = func() error {
		p.stop = func() error { return nil }
		stopping.Store(true)
		// Once nothing is outstanding every callback has run, and latencies is ours to read.
		deadline := time.Now().Add(setupTimeout)
		for c.outstanding.Load() > 0 || !closed(done) {
			if time.Now().After(deadline) {
				scancel()
				return fmt.Errorf("%d sends still unanswered %v after the run", c.outstanding.Load(), setupTimeout)
			}
			time.Sleep(10 * time.Millisecond)
		}
		return within(ctx, "closing the producer", func() error { producer.Close(); return nil })
	}
	return p, nil
}

// measure warms up, then measures the window, watching for stalls and errors all along, and
// stops the producer.
func (w workload) measure(ctx context.Context, c *counts, p *producing) (result, error) {
	if err := w.watch(ctx, c, w.warmup); err != nil {
		return result{}, err
	}
	cpu0, ours0, busy0, err := w.cpuSample()
	if err != nil {
		return result{}, err
	}
	t0, s0, r0, i0 := time.Now(), c.sent.Load(), c.received.Load(), p.paced.Load()
	if err := w.watch(ctx, c, w.window); err != nil {
		return result{}, err
	}
	res := result{window: time.Since(t0), sent: c.sent.Load() - s0, received: c.received.Load() - r0}
	i1 := p.paced.Load()
	cpu1, ours1, busy1, err := w.cpuSample()
	if err != nil {
		return result{}, err
	}
	res.cpu = cpu1 - cpu0
	res.others = max(0, (busy1-busy0)-(ours1-ours0)).Seconds() / res.window.Seconds()
	if err := p.stop(); err != nil {
		return result{}, err
	}
	if err := c.err(); err != nil {
		return result{}, err
	}
	if w.rate > 0 {
		res.paced = i1 - i0
		for _, d := range p.latencies[i0:i1] {
			if d > 0 { // 0: the send failed, which c.err reported
				res.latencies = append(res.latencies, d)
			}
		}
		slices.Sort(res.latencies)
	}
	return res, nil
}

// watch waits d, failing on the first error the run met, when it makes no progress for
// stallLimit, or when the broker process is gone.
func (w workload) watch(ctx context.Context, c *counts, d time.Duration) error {
	progress := func() int64 {
		if w.consume {
			return c.received.Load()
		}
		return c.sent.Load()
	}
	end := time.Now().Add(d)
	last, lastAt := progress(), time.Now()
	for now := time.Now(); now.Before(end); now = time.Now() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(50*time.Millisecond, end.Sub(now))):
		}
		if err := c.err(); err != nil {
			return err
		}
		if p := progress(); p != last {
			last, lastAt = p, time.Now()
		} else if time.Since(lastAt) > stallLimit {
			what := "acknowledged by the broker"
			if w.consume {
				what = "received"
			}
			return fmt.Errorf("stalled: no message %s for %v (%d sent, %d received so far)",
				what, stallLimit, c.sent.Load(), c.received.Load())
		}
		if w.pid != 0 {
			if _, err := processCPU(w.pid); err != nil {
				return fmt.Errorf("broker process gone: %w", err)
			}
		}
	}
	return nil
}

// cpuSample returns the CPU time used so far by the broker process (0 without one), by this
// process and the broker together, and by the whole machine.
func (w workload) cpuSample() (broker, ours, machine time.Duration, err error) {
	if w.pid != 0 {
		if broker, err = processCPU(w.pid); err != nil {
			return 0, 0, 0, fmt.Errorf("broker CPU: %w", err)
		}
	}
	self, err := processCPU(os.Getpid())
	if err != nil {
		return 0, 0, 0, err
	}
	machine, err = machineBusy()
	return broker, broker + self, machine, err
}

// within runs f, giving up (and leaving it running) if it has not returned within setupTimeout:
// the official client's calls have no context, and a bench must fail rather than hang.
func within(ctx context.Context, what string, f func() error) error {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: no answer within %v", what, setupTimeout)
	}
}

// pace calls send(i) for i = 0, 1, … so that message i goes out at start + i/rate. It sleeps
// while ahead of schedule and catches up in a burst after oversleeping, so the average rate is
// exact even though a sleep is coarser than one message interval.
func pace(ctx context.Context, stopping *atomic.Bool, rate, n int, send func(int)) {
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	for i := 0; i < n && !stopping.Load() && ctx.Err() == nil; {
		due := int(time.Since(start)/interval) + 1
		for ; i < due && i < n; i++ {
			send(i)
		}
		if next := start.Add(time.Duration(i) * interval); time.Until(next) > 0 {
			time.Sleep(time.Until(next))
		}
	}
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
