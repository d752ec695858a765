package data

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// binary holds the binary-protocol side of Admin: Tail and Produce, through letterbox's own
// client.
type binary struct {
	client *client.Client
}

// pulsarClient creates the client on first use, so a TUI that only browses never opens a
// binary connection.
func (a *Admin) pulsarClient() (*client.Client, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.bin != nil {
		return a.bin.client, nil
	}
	if a.opts.ServiceURL == "" {
		return nil, errors.New("no service URL: tail and produce need the binary protocol")
	}
	opts := client.Options{
		ServiceURL:        a.opts.ServiceURL,
		OperationTimeout:  10 * time.Second,
		ConnectionTimeout: 5 * time.Second,
		Logger:            slog.New(slog.DiscardHandler), // the TUI owns the terminal
		TLSTrustCertsFile: a.opts.TLSTrustCertsFile,

		TLSAllowInsecureConnection: a.opts.TLSAllowInsecureConnection,
		TLSCertFile:                a.opts.TLSCertFile,
		TLSKeyFile:                 a.opts.TLSKeyFile,
	}
	switch {
	case a.opts.TokenSource != nil:
		opts.TokenSource = a.opts.TokenSource
	case a.opts.TokenFile != "":
		opts.TokenFile = a.opts.TokenFile
	default:
		opts.Token = a.opts.Token
	}
	c, err := client.New(opts)
	if err != nil {
		return nil, err
	}
	a.bin = &binary{client: c}
	return c, nil
}

// OwnConnections is how many binary-protocol connections this source holds (a broker counts
// them among its clients).
func (a *Admin) OwnConnections() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.bin == nil {
		return 0
	}
	return a.bin.client.Connections()
}

// Close releases the binary connection, if one was opened. Safe to call twice.
func (a *Admin) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.bin != nil {
		a.bin.client.Close()
		a.bin = nil
	}
}

// exists checks that topic exists before a reader subscribes to it: subscribing would create
// a topic that does not, and a screen that reads never creates one.
func (a *Admin) exists(ctx context.Context, topic string) error {
	if n, err := a.partitions(ctx, topic); err == nil && n > 0 {
		return nil
	}
	if _, err := a.topicAdmin(ctx).Stats(ctx, topic); err != nil {
		return fmt.Errorf("%s: %w", naming.ShortName(topic, ""), err)
	}
	return nil
}

// Tail reads topic from the latest message on with a non-durable reader: nothing is
// acknowledged, no subscription outlives it.
func (a *Admin) Tail(ctx context.Context, topic string) (<-chan TailEvent, func(), error) {
	c, err := a.pulsarClient()
	if err != nil {
		return nil, nil, err
	}
	topic = ParseTopic(topic).String()
	if err := a.exists(ctx, topic); err != nil {
		return nil, nil, err
	}
	r, err := c.CreateReader(ctx, client.ReaderOptions{Topic: topic, StartMessageID: client.LatestMessageID(),
		SubscriptionName: naming.OwnReader("tail"), Name: naming.OwnPrefix + "tail", ReceiverQueueSize: 100})
	if err != nil {
		return nil, nil, err
	}
	rctx, cancel := context.WithCancel(context.Background())
	ch := make(chan TailEvent, 64)
	var watching sync.WaitGroup
	watching.Add(1)
	go func() { // says when the reader loses its broker, and when it has it back
		defer watching.Done()
		tick := time.NewTicker(tailLinkEvery)
		defer tick.Stop()
		up := true
		for {
			select {
			case <-rctx.Done():
				return
			case <-tick.C:
			}
			if now := r.Connected(); now != up {
				up = now
				ev := TailEvent{Link: LinkBack}
				if !now {
					ev.Link = LinkLost
				}
				select {
				case ch <- ev:
				case <-rctx.Done():
					return
				}
			}
		}
	}()
	go func() {
		defer close(ch)
		defer watching.Wait() // no send on ch once it is closed
		defer cancel()
		defer r.Close()
		for {
			pm, err := r.Next(rctx)
			if err != nil {
				if rctx.Err() == nil { // not stopped: say why it ended
					select {
					case ch <- TailEvent{Err: err}:
					case <-rctx.Done():
					}
				}
				return
			}
			select {
			case ch <- TailEvent{Msg: fromClient(pm)}:
			case <-rctx.Done():
				return
			}
		}
	}()
	var once sync.Once
	return ch, func() { once.Do(cancel) }, nil
}

// ErrLinkLost says a tail's reader lost its broker; it reconnects by itself.
var ErrLinkLost = errors.New("connection to the broker lost: reconnecting")

// tailLinkEvery is how often a tail looks at its reader's connection.
const tailLinkEvery = 250 * time.Millisecond

// Produce sends one message with a short-lived producer.
func (a *Admin) Produce(ctx context.Context, topic string, req ProduceRequest) (string, error) {
	c, err := a.pulsarClient()
	if err != nil {
		return "", err
	}
	p, err := c.CreateProducer(ctx, client.ProducerOptions{Topic: ParseTopic(topic).String(), DisableBatching: true})
	if err != nil {
		return "", err
	}
	defer p.Close()
	id, err := p.Send(ctx, &client.Message{Payload: req.Payload, Key: req.Key,
		Properties: req.Properties, DeliverAfter: req.Delay})
	if err != nil {
		return "", err
	}
	return id.String(), nil
}
