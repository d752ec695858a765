// Package demo is the workload behind `letterbox demo`: a few made-up services that produce
// JSON, Avro and string messages and consume them the way real applications do — a consumer
// that retries and dead-letters a share of what it reads (with a reason property), one that
// reads with AUTO_CONSUME, a Key_Shared group, one that negatively acknowledges — so that every
// screen of the TUI has something to show within seconds.
//
// It speaks only through letterbox's own client (binary protocol) and client/admin (REST), so it
// runs against the embedded broker or any Pulsar cluster. Every goroutine belongs to a Workload
// and ends with Stop. The rate is bounded (about 30 messages a second in all by default) so an
// idle demo costs little CPU.
package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
)

// DefaultNamespace is where the demo's topics live.
const DefaultNamespace = "public/demo"

// Options configure a Workload. ServiceURL is required.
type Options struct {
	// ServiceURL is the binary protocol URL, pulsar://host:port.
	ServiceURL string
	// AdminURL, when set, is used to create the namespace (with deduplication on) and the
	// partitioned payments topic before the services start. Without it the topics are
	// auto-created, payments unpartitioned.
	AdminURL string
	// Namespace holds the demo's topics; default DefaultNamespace.
	Namespace string
	// Rate is the total rate of new messages, per second (default 30); retries and
	// redeliveries come on top.
	Rate float64
	// Logger receives the workload's problems; nil discards them.
	Logger *slog.Logger
	// HTTPClient, when set, makes the setup's admin requests (letterbox demo passes one whose
	// connections it knows for its own).
	HTTPClient *http.Client
}

// Workload runs the demo's services. Create it with New, then Start; Stop ends it.
type Workload struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	cl      *client.Client
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	stopped bool
}

// New checks opts; it does not connect.
func New(opts Options) (*Workload, error) {
	if opts.ServiceURL == "" {
		return nil, errors.New("demo: no service URL")
	}
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if opts.Rate <= 0 {
		opts.Rate = 30
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Workload{opts: opts, log: log}, nil
}

// Topic is the full name of one of the demo's topics ("orders", "payments", …).
func (w *Workload) Topic(local string) string {
	return "persistent://" + w.opts.Namespace + "/" + local
}

// Start prepares the namespace (with an admin URL), creates every producer and consumer, and
// starts the services. It returns once they all run, or with the first error (then nothing is
// left running). ctx bounds the setup only; the services run until Stop.
func (w *Workload) Start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cl != nil || w.stopped {
		return errors.New("demo: already started")
	}
	if w.opts.AdminURL != "" {
		if err := w.setup(ctx); err != nil {
			return err
		}
	}
	cl, err := client.New(client.Options{ServiceURL: w.opts.ServiceURL, Logger: w.log,
		ConnectionTimeout: 5 * time.Second, OperationTimeout: 10 * time.Second})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	w.cl, w.cancel = cl, cancel
	for _, svc := range w.services() {
		run, err := svc.start(ctx, cl)
		if err != nil {
			w.stopLocked()
			return fmt.Errorf("demo: %s: %w", svc.name, err)
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			run(runCtx)
		}()
	}
	return nil
}

// Connections is how many binary-protocol connections the workload holds (0 before Start and
// after Stop): the broker counts them among its clients.
func (w *Workload) Connections() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cl == nil || w.stopped {
		return 0
	}
	return w.cl.Connections()
}

// Stop ends every service and closes the client. Safe to call more than once, and before Start.
func (w *Workload) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopLocked()
}

func (w *Workload) stopLocked() {
	w.stopped = true
	if w.cancel != nil {
		w.cancel()
	}
	w.wg.Wait()
	if w.cl != nil {
		w.cl.Close()
	}
}

// setup creates the namespace with deduplication on and payments with three partitions. What
// exists already is left as it is.
func (w *Workload) setup(ctx context.Context) error {
	ac, err := admin.New(admin.Options{URL: w.opts.AdminURL, Timeout: 10 * time.Second, HTTPClient: w.opts.HTTPClient})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := ac.CreateNamespace(ctx, w.opts.Namespace); err != nil && admin.StatusOf(err) != 409 {
		return fmt.Errorf("demo: namespace %s: %w", w.opts.Namespace, err)
	}
	if err := ac.SetDeduplication(ctx, w.opts.Namespace, true); err != nil {
		return fmt.Errorf("demo: deduplication on %s: %w", w.opts.Namespace, err)
	}
	if err := ac.CreateTopic(ctx, w.Topic("payments"), 3, nil); err != nil && admin.StatusOf(err) != 409 {
		return fmt.Errorf("demo: payments topic: %w", err)
	}
	return nil
}

// service is one part of the workload: start creates its producers and consumers, and the
// function it returns runs until ctx ends, then closes them.
type service struct {
	name  string
	start func(ctx context.Context, cl *client.Client) (func(ctx context.Context), error)
}

func (w *Workload) services() []service {
	r := w.opts.Rate
	return []service{
		{"checkout", w.checkout(r * 0.4)},
		{"billing", w.billing()},
		{"audit", w.audit()},
		{"payments-gateway", w.paymentsGateway(r * 0.4)},
		{"ledger", w.ledger()},
		{"warehouse", w.warehouse(r * 0.2)},
		{"fulfilment", w.fulfilment()},
	}
}

// every calls fn at rate per second until ctx ends.
func every(ctx context.Context, rate float64, fn func(ctx context.Context)) {
	if rate <= 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn(ctx)
		}
	}
}

// consume hands each received message to fn until ctx ends.
func consume(ctx context.Context, c *client.Consumer, fn func(ctx context.Context, m *client.Message)) {
	for {
		m, err := c.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, client.ErrClosed) {
				return
			}
			select { // a broker going away: try again shortly
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		fn(ctx, m)
	}
}
