package main

// The many part: what many topics, subscriptions and connections cost the broker at rest, as an
// integration test suite leaves them: 10,000 topics, each with a producer and a consumer of the
// official client, over 1,000 connections (1,000 clients of 10 topics each), nothing sent. Then
// busy runs on 100 of those topics while the rest stay idle, against the letterbox broker and,
// in the same rounds and the same way, against the forwarding null broker (nullecho.go), the
// ceiling these clients allow on this machine: our client's producers and consumers at 50,000
// msg/s (manyours.go), which fit in one core where the official client's need more than the
// machine has, and the official client's at 10,000 msg/s, a rate this machine can generate.

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
)

// Targets from issues 22 and 36.
const (
	idleTopics     = 10_000
	idleConns      = 1_000
	idleBusyTopics = 100
	idleBusyRate   = 50_000 // our client's busy run
	// officialBusyRate is the official client's: unbatched it needs about 30 µs of CPU a
	// message, and 50,000 a second would take more than this machine's two cores.
	officialBusyRate = 10_000
	targetManyRSS    = 400 << 20
	targetManyCPU    = 0.02 // of one core
	// The official client's run: p99 under targetManyP99. Our client's: letterbox's p99 at
	// most targetBusyRatio times the null broker's in the same round (median of the rounds'
	// ratios) and under targetBusyP99, the broker's RSS under targetBusyRSS throughout.
	targetManyP99   = 10 * time.Millisecond
	targetBusyRatio = 2.0
	targetBusyP99   = 50 * time.Millisecond
	targetBusyRSS   = 1 << 30
	idleWindow      = 10 * time.Second
	// manyGCPercent is the bench's GOGC during the many part. Its idle official consumers and
	// producers hold 1.5 GB of queues the collector marks in every cycle, and the busy runs
	// allocate about 100 MB a second: at the default a cycle, a second or more of a core, came
	// every ten seconds, in the middle of a window, and the load generator's own pauses were
	// measured as the broker's latency. With this, and a collection before each busy run, no
	// cycle falls in a window (the runs' table counts them). The busy runs go further: the
	// collector is off and the bench collects only before each run (busyWarm).
	manyGCPercent = 300
	// busyWarm is the memory the bench touches and frees before each busy run. The runs
	// allocate up to 300 MB a second, and memory the heap takes afresh from the OS costs a page
	// fault and zeroing per 4 KiB: in the first run, on the letterbox broker, the bench used a
	// fifth more CPU than in the same run on the null broker right after, which reused what the
	// first had freed. The runtime returns freed memory to the OS down to a tenth over what was
	// in use at the last collection, so the warm memory is garbage at the collection before the
	// run, then free and kept: the run's allocations reuse it.
	busyWarm = 3 << 30
	// manySettle is the wait between the last creation and the window at rest: the runtime
	// gives back the memory the creations used meanwhile, which is their cost, not rest's.
	manySettle = 15 * time.Second
)

// manyReport is what the many part measured (zero values: not measured).
type manyReport struct {
	setup time.Duration // creating every producer and consumer
	rss   int64         // broker RSS at rest, bytes
	cpu   float64       // broker CPU at rest, cores
	// official and ours are the rounds of the official clients' busy run and of our client's,
	// each on the letterbox broker and then on the null broker.
	official, ours []busyPair
}

// busyPair is one round of a busy run: on the letterbox broker, then on the null broker.
type busyPair struct{ letterbox, null *busyReport }

// busyReport is one run of 100 busy topics among the idle ones.
type busyReport struct {
	res  *result
	rate int // msg/s asked of the pacer
	rss  int64
	// peakRSS is the broker's largest RSS sampled during the run (every 100 ms).
	peakRSS int64
	// Whether the load generator kept up: the 99th percentile of how late the pacer handed a
	// message to the client, and the CPU the bench process (its clients) and the machine's
	// other processes used, in cores.
	pacerLag       time.Duration
	client, others float64
	// benchGCs is how many garbage collections the bench process completed during the window.
	benchGCs uint64
}

// measureMany runs the many part against a fresh in-memory broker of bin and a forwarding null
// broker, each with as many idle clients attached, and rounds busy runs of our client.
func measureMany(ctx context.Context, r *manyReport, bin string, rounds int, progress func(string, ...any), failed func(string, error)) {
	defer debug.SetGCPercent(debug.SetGCPercent(manyGCPercent))
	lb, err := startBroker(ctx, bin)
	if err != nil {
		failed("many: starting the broker", err)
		return
	}
	defer lb.stop()
	progress("many: %d topics with a producer and a consumer each, over %d connections", idleTopics, idleConns)
	began := time.Now()
	idle, err := attachIdle(ctx, lb.serviceURL)
	defer idle.close()
	if err != nil {
		failed("many: creating producers and consumers", err)
		return
	}
	r.setup = time.Since(began)
	progress("many: created in %v; at rest for %v", r.setup.Round(time.Second), idleWindow)
	if !measureAtRest(ctx, r, lb.pid(), failed) {
		return
	}
	progress("many: broker RSS %.0f MB, CPU %.2f %% of a core; now the same on the null broker, the ceiling", float64(r.rss)/1e6, 100*r.cpu)
	self, err := os.Executable()
	if err != nil {
		failed("many: the bench's own binary", err)
		return
	}
	nb, err := startProc(ctx, self, []string{echoChildArg})
	if err != nil {
		failed("many: starting the null broker", err)
		return
	}
	defer nb.stop()
	idleNull, err := attachIdle(ctx, nb.serviceURL)
	defer idleNull.close()
	if err != nil {
		failed("many: creating producers and consumers on the null broker", err)
		return
	}
	if !sleepCtx(ctx, manySettle) {
		return
	}
	debug.SetGCPercent(-1) // collections before each busy run only (paceBusy); the defer above restores it
	for i := range rounds {
		progress("many: %d of the topics at %d msg/s from the official client's producers and consumers [round %d/%d]: letterbox, then the null broker", idleBusyTopics, officialBusyRate, i+1, rounds)
		var pair busyPair
		pair.letterbox = manyBusy(ctx, lb.pid(), idle, officialBusyRate, failed)
		if pair.letterbox != nil && ctx.Err() == nil {
			pair.null = manyBusy(ctx, nb.pid(), idleNull, officialBusyRate, failed)
		}
		if ctx.Err() != nil {
			return
		}
		if pair.letterbox == nil || pair.null == nil {
			break // failed (reported): on to our client's runs
		}
		r.official = append(r.official, pair)
	}
	// The official consumers of the busy topics leave their subscriptions to ours.
	idle.closeBusyConsumers()
	idleNull.closeBusyConsumers()
	ours, err := attachOurBusy(ctx, lb.serviceURL)
	defer ours.close()
	if err != nil {
		failed("many: our client", err)
		return
	}
	oursNull, err := attachOurBusy(ctx, nb.serviceURL)
	defer oursNull.close()
	if err != nil {
		failed("many: our client on the null broker", err)
		return
	}
	for i := range rounds {
		progress("many: %d of the topics at %d msg/s from our client's producers and consumers [round %d/%d]: letterbox, then the null broker", idleBusyTopics, idleBusyRate, i+1, rounds)
		var pair busyPair
		if pair.letterbox = ours.run(ctx, lb.pid(), idleBusyRate, failed); pair.letterbox == nil || ctx.Err() != nil {
			return
		}
		if pair.null = oursNull.run(ctx, nb.pid(), idleBusyRate, failed); pair.null == nil {
			return
		}
		r.ours = append(r.ours, pair)
	}
}

// measureAtRest measures the broker's RSS and CPU while nothing is sent; false if it failed or
// ctx ended.
func measureAtRest(ctx context.Context, r *manyReport, pid int, failed func(string, error)) bool {
	// Let the creation's garbage be collected and the clients' first flows settle.
	if !sleepCtx(ctx, manySettle) {
		return false
	}
	cpu0, err := processCPU(pid)
	if err != nil {
		failed("many: broker CPU", err)
		return false
	}
	t0 := time.Now()
	if !sleepCtx(ctx, idleWindow) {
		return false
	}
	cpu1, err := processCPU(pid)
	if err != nil {
		failed("many: broker CPU", err)
		return false
	}
	r.cpu = float64(cpu1-cpu0) / float64(time.Since(t0))
	if r.rss, err = processRSS(pid); err != nil {
		failed("many: broker RSS", err)
		return false
	}
	return true
}

// idleClients are the official clients of the many part: a producer and a consumer on each
// of idleTopics topics, over idleConns clients (a connection each).
type idleClients struct {
	clients   []pulsar.Client
	producers []pulsar.Producer
	consumers []pulsar.Consumer
}

// attachIdle creates the many part's clients, producers and consumers against serviceURL.
// Whatever it returns, even with an error, is to be closed.
func attachIdle(ctx context.Context, serviceURL string) (*idleClients, error) {
	ic := &idleClients{
		clients:   make([]pulsar.Client, idleConns),
		producers: make([]pulsar.Producer, idleTopics),
		consumers: make([]pulsar.Consumer, idleTopics),
	}
	for i := range ic.clients {
		c, err := pulsar.NewClient(pulsar.ClientOptions{URL: serviceURL, OperationTimeout: time.Minute, Logger: clientLogger})
		if err != nil {
			return ic, fmt.Errorf("client: %w", err)
		}
		ic.clients[i] = c
	}
	// A few topics at once: each is two round trips, and one at a time would take minutes.
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for ctx.Err() == nil {
				t := int(next.Add(1) - 1)
				if t >= idleTopics {
					return
				}
				c := ic.clients[t%idleConns]
				topic := fmt.Sprintf("persistent://public/default/idle-%05d", t)
				opts := pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.Shared}
				if t >= idleBusyTopics {
					// Acknowledgements not grouped: the client's grouping ticks every 100 ms
					// per consumer, sent or not, and 10,000 of those tickers (100,000
					// wake-ups a second) took the bench's own CPU from the busy run. The
					// broker sees nothing of it: an idle consumer acknowledges nothing.
					opts.AckGroupingOptions = &pulsar.AckGroupingOptions{MaxSize: 1}
				}
				cons, err := c.Subscribe(opts)
				if err == nil {
					ic.consumers[t] = cons
					// Batching off: at 500 msg/s a producer's batches would close on the 10 ms
					// timer, and its latency would be the timer's, not the broker's. A short
					// delay (1 ms) would not batch either: the pacer hands each producer one
					// message every 2 ms, so a batch would hold one and wait for the timer.
					ic.producers[t], err = c.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
				}
				if err != nil {
					mu.Lock()
					firstErr = cmpErr(firstErr, fmt.Errorf("%s: %w", topic, err))
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	return ic, firstErr
}

// close closes every client, and with them their producers and consumers.
func (ic *idleClients) close() {
	for _, c := range ic.clients {
		if c != nil {
			c.Close()
		}
	}
}

// closeBusyConsumers closes the consumers of the busy topics, whose subscriptions our client's
// consumers then take.
func (ic *idleClients) closeBusyConsumers() {
	for i, c := range ic.consumers[:idleBusyTopics] {
		if c != nil {
			c.Close()
			ic.consumers[i] = nil
		}
	}
}

// manyBusy runs the busy load through the official client at rate: the busy topics' producers
// send, their consumers receive and acknowledge.
func manyBusy(ctx context.Context, pid int, idle *idleClients, rate int, failed func(string, error)) *busyReport {
	producers, consumers := idle.producers[:idleBusyTopics], idle.consumers[:idleBusyTopics]
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var received atomic.Int64
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	for _, c := range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-rctx.Done():
					return
				case m := <-c.Chan():
					c.Ack(m)
					received.Add(1)
				}
			}
		}()
	}
	payload := make([]byte, payloadSize)
	send := func(i int, done func(error)) {
		producers[i%len(producers)].SendAsync(rctx, &pulsar.ProducerMessage{Payload: payload}, func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) {
			done(err)
		})
	}
	flush := func() error {
		for _, p := range producers {
			if err := p.FlushWithCtx(ctx); err != nil {
				return err
			}
		}
		return nil
	}
	b, err := paceBusy(rctx, pid, rate, send, flush)
	if err != nil {
		failed("many: busy producers", err)
		return nil
	}
	b.res.received = received.Load()
	return b
}

// paceBusy hands rate messages a second to send, numbered, for idleWindow after a second's
// warm-up, then flushes; it returns the publish latencies of the window (from the hand-over
// to done), the broker's largest RSS meanwhile and whether the bench kept up: how late the
// pacer handed messages over, and the CPU the bench and other processes used.
func paceBusy(ctx context.Context, pid, rate int, send func(i int, done func(error)), flush func() error) (*busyReport, error) {
	const warmup = time.Second
	warmHeap(busyWarm)
	runtime.GC() // the only collections of the busy runs (measureMany)
	n := int(float64(rate) * (warmup + idleWindow).Seconds())
	latencies := make([]time.Duration, n)
	lags := make([]time.Duration, n) // how late each message was handed over, by schedule
	interval := time.Second / time.Duration(rate)
	rss := sampleRSS(pid)
	var failedSends atomic.Int64
	var stopping atomic.Bool
	began := time.Now()
	w := workload{pid: pid}
	var cpu0, ours0, machine0 time.Duration
	var gcs0 uint64
	var cpuOnce sync.Once
	var windowStart time.Time
	pace(ctx, &stopping, rate, n, func(i int) {
		if time.Since(began) >= warmup {
			cpuOnce.Do(func() { cpu0, ours0, machine0, _ = w.cpuSample(); gcs0 = gcCycles(); windowStart = time.Now() })
		}
		t0 := time.Now()
		lags[i] = t0.Sub(began) - time.Duration(i)*interval
		send(i, func(err error) {
			if err != nil {
				failedSends.Add(1)
				return
			}
			latencies[i] = time.Since(t0)
		})
	})
	// The CPU of the window is sampled when the pacer is done, before the flush.
	cpu1, ours1, machine1, _ := w.cpuSample()
	b := &busyReport{rate: rate, peakRSS: rss.stop(), benchGCs: gcCycles() - gcs0}
	// The window is as long as the pacer took: longer than planned when sends blocked (a
	// producer's bound of messages in flight), and the rate then falls short.
	span := idleWindow
	if !windowStart.IsZero() {
		span = time.Since(windowStart)
		b.client = (ours1 - ours0 - (cpu1 - cpu0)).Seconds() / span.Seconds()
		b.others = max(0, (machine1-machine0)-(ours1-ours0)).Seconds() / span.Seconds()
	}
	if err := flush(); err != nil {
		return nil, fmt.Errorf("flushing: %w", err)
	}
	if f := failedSends.Load(); f > 0 {
		return nil, fmt.Errorf("%d sends failed", f)
	}
	first := int(float64(rate) * warmup.Seconds())
	late := slices.Clone(lags[min(first, len(lags)):])
	slices.Sort(late)
	if len(late) > 0 {
		b.pacerLag = late[len(late)*99/100]
	}
	window := slices.Clone(latencies[min(first, len(latencies)):])
	window = slices.DeleteFunc(window, func(d time.Duration) bool { return d == 0 })
	slices.Sort(window)
	b.res = &result{window: span, sent: int64(len(window)), latencies: window, paced: int64(len(window)), cpu: cpu1 - cpu0}
	b.rss, _ = processRSS(pid)
	return b, nil
}

// warmHeap has the heap hold n bytes of free memory it has touched, once the next collection
// frees them (busyWarm). In chunks: they fit between what the runs before left in use.
func warmHeap(n int) {
	const chunk = 64 << 20
	chunks := make([][]byte, 0, n/chunk)
	for range n / chunk {
		b := make([]byte, chunk)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		chunks = append(chunks, b)
	}
	runtime.KeepAlive(chunks)
}

// gcCycles is how many garbage collections this process has completed.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// rssSampler records a process's largest RSS until stopped.
type rssSampler struct {
	stopCh chan struct{}
	done   chan struct{}
	peak   atomic.Int64
}

// sampleRSS reads pid's RSS every 100 ms until stop, which returns the largest.
func sampleRSS(pid int) *rssSampler {
	s := &rssSampler{stopCh: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if v, err := processRSS(pid); err == nil && v > s.peak.Load() {
				s.peak.Store(v)
			}
			select {
			case <-s.stopCh:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *rssSampler) stop() int64 {
	close(s.stopCh)
	<-s.done
	return s.peak.Load()
}

func cmpErr(old, err error) error {
	if old != nil {
		return old
	}
	return err
}

// sleepCtx sleeps for d, false if ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}
