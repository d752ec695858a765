// Package broker is letterbox's embedded Pulsar broker: the binary protocol on its listeners,
// topics, subscriptions and dispatch over a storage.Store (a storage.Log per topic), and the
// admin operations that broker/web serves over HTTP.
//
// The package can be imported, but it is not a stable API: it changes as the broker needs.
// A test that wants a broker uses pulsartest, whose API is stable; a process runs `letterbox
// broker`.
//
// What it owns: connections and one handler per command of the binary protocol (each named
// after its command's number), with TLS and backpressure; the topic registry, topics,
// producers, consumers, subscriptions and their dispatch (shared, failover, key-shared), seeks,
// deduplication, schemas, compaction, unloads, deleting topics for good and what an
// auto-created topic is for; the data's lifetime and persistence (cursors, ledgers, retention,
// TTL, subscription expiry, backlog quotas, the memory budget); the admin operations, one group
// per resource, that broker/web serves (the REST-facing API only: the core never calls them),
// resource groups and the rates their namespaces' topics share, and the dynamic configuration;
// Config and upstream's broker.conf keys; authentication and authorization over broker/auth;
// limits; containing panics. The broker's policy defaults and their layered resolution are
// broker/policy's; the JSON documents the admin operations take and answer (stats, policies,
// ids) are client/adminapi's.
//
// Its entry points: New with Options (WithConfig over DefaultConfig or LoadConf, WithStore,
// WithListen, WithLogger), Addr and ServiceURL, Close; the admin operations are methods of
// *Broker, and tests intercept commands with an Interceptor.
//
// Goroutines, each with its owner, which stops it:
//   - the Broker (Close closes stop, the listeners and every connection, then waits on b.wg):
//     an accept loop per listener (acceptOn), the cursor flusher (flushLoop), message expiry
//     (expiryLoop), retention (retentionLoop), the periodic policy checks (policyLoop: backlog
//     quotas, subscription expiry), the compaction monitor (compactionMonitor) and, from the
//     first stats request, the rate sampler (sampleLoop);
//   - each connection (conn.close): a reader, which runs the command handlers and the dispatch
//     of what its SENDs stored (readLoop) and, once the connection is closed, waits for the
//     others and has the Broker forget the connection (conn.forget), a writer (writeLoop) and a
//     keep-alive (keepAlive), and an auth refresher where credentials expire (authRefreshLoop);
//   - each topic (topic.close, unloading): its dispatcher while it has something to dispatch
//     (topic.dispatcher: started by signal, ended by a round that found nothing new, a timer
//     signalling what is due later) and a compaction run while one is in progress
//     (compactionRun.run);
//   - each durable log (storage): its writer, which runs Append's completions, and its deleter.
//
// Short-lived goroutines end on their own: the answer to a refused connection (bounded by a
// write deadline) and a connection's close started from a goroutine that cannot wait for it
// (after a contained panic, or an interceptor's disconnect).
//
// Handlers never block on the network: they append to the connection's write buffer, which has a
// bound: past it the dispatchers skip the connection's consumers and its reader stops reading until
// the writer has drained it. Topic state (producers, subscriptions, consumers, cursors,
// deduplication, compaction) is guarded by the topic's mutex.
//
// Lock order: a lock is taken only while holding locks to its left in
//
//	topicRegistry.mu → topic.mu → producer's receiptQueue.mu → conn.wmu
//	                    topic.mu → conn.msgMu → conn.wmu
//
// and nothing is held across two topics' mutexes. The other locks are leaves: taken with any of
// these held, and no other lock of the broker's is taken while one is held. They are conn.mu (the
// connection's producers and consumers), topic.dmu (whether its dispatcher runs), adminState.mu
// (tenants, policies, terminated topics, topic policies, rate samples; taken under
// topicRegistry.mu and topic.mu), schemaRegistry.mu, dedupState.mu, dirtySet.mu (the flusher's
// dirty topics), Broker.mu (connections, per-IP counts, front ends, closed), dynamicConfig.mu
// (serializes updates; reads are atomic), certLoader.mu (the TLS certificates), and
// groupLimiters.mu and groupLimiter.mu (resource groups' shared rates). The store's own locks (a
// Log's, the metadata store's) come after all of these: the broker calls the store with them
// held, and the store calls back (Append's done) with none of its locks held: on a durable log's
// writer goroutine, or for an in-memory log within Append, under the caller's topic.mu. The
// callback takes only dedupState.mu, dirtySet.mu, topic.dmu and the receipt queue, never
// topic.mu. The test hooks (an Interceptor, which runs inside every send, and a cluster
// fixture's Ownership) may run with any of these held and must not call back into the broker.
//
// A panic in a handler, a dispatcher, a store's completion or any other goroutine a connection
// starts (its keepalive and authentication refresh, its close) is contained where that goroutine's
// work starts: logged with its stack, the connection concerned closed, the process up. Every lock
// held around code that can panic is released by a deferred unlock (topic.locked), so a contained
// panic leaves nothing locked.
//
// What clients may make the broker hold is bounded: connections, producers, consumers and
// subscriptions under upstream's limits, acknowledgements only for entries of the log, batch counts
// that can be true, and in-memory data under a memory budget.
package broker

import (
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Version is reported to clients in CONNECTED.server_version.
const Version = "letterbox-0.1.0"

// Broker is one embedded broker. Create it with New; Close stops it.
type Broker struct {
	cfg Config
	log *slog.Logger
	ln  net.Listener
	// lnTLS is the TLS listener beside ln (brokerServicePortTls), or nil (tls.go).
	lnTLS net.Listener

	store   storage.Store
	topics  *topicRegistry
	schemas *schemaRegistry
	admin   adminState    // tenants, policies, terminated topics, rate samples (admin*.go)
	groups  groupLimiters // resource groups' shared rate buckets (resourcegroup_rate.go)
	sec     *security     // authentication, authorization, TLS (auth_check.go)

	mu     sync.Mutex
	conns  map[*conn]struct{}
	limits connLimits // connections per IP (limits.go)
	closed bool

	wg         sync.WaitGroup
	stop       chan struct{}
	sweep      chan struct{} // memory pressure asks retentionLoop to trim every topic (ledgers.go)
	closeOnce  sync.Once
	closeStore sync.Once

	bufs   *wire.BufferPool // SEND frames' buffers (conn.readLoop)
	chunks chunkPool        // long write queues' chunks (conn.nextChunk)
	reads  entryBufs        // what dispatch rounds read entries into (subscription.dispatch)
	dirty  dirtySet         // topics whose cursors the next flush writes (dirty.go)
	// meter is the store's, when its memory is budgeted (quota.go); overBudget is set while
	// the budget is spent, for logging once per episode.
	meter      storage.MemoryMeter
	overBudget atomic.Bool
	panics     atomic.Int64 // contained so far (panic.go)
	intercept  atomic.Pointer[Interceptor]
	// fronts makes a test broker play a cluster's brokers (frontend.go, built with the
	// clustertest tag only); its front ends are guarded by mu.
	//lint:ignore U1000 read only by the clustertest build's frontend.go
	fronts  frontEnds
	dyn     dynamicConfig // dynamic configuration overrides (dynamic_config.go)
	nextID  atomic.Uint64 // producer name counter and ledger ids
	started time.Time
	// unreadFor is how long a topic without subscriptions keeps what it was sent, when its
	// ledgers close without a minimum age (in memory by default; ledgers.go); 0: as the
	// ledgers say.
	unreadFor time.Duration
}

// New starts a broker listening on the configured address (127.0.0.1:0 by default).
func New(opts ...Option) (*Broker, error) {
	cfg := DefaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	pooled := cfg.FrameBufferPool
	if cfg.MemoryLimit > 0 {
		pooled = min(pooled, cfg.MemoryLimit/4)
	}
	bufs := wire.NewBufferPoolWith(wire.BufferPoolOptions{MaxIdle: pooled, Poison: cfg.PoisonFrameBuffers, OffHeap: cfg.FrameBuffersOffHeap})
	var unreadFor time.Duration
	if cfg.Store == nil {
		cfg.Store = storage.NewMemoryStoreWith(storage.MemoryStoreOptions{Rollover: cfg.Rollover, Blocks: frameBlocks{bufs}})
		if cfg.Rollover.MinAge == 0 {
			unreadFor = storage.DefaultMinLedgerAge // ledgers.go: keepUnread
		}
	}
	sec, err := newSecurity(cfg)
	var ln, lnTLS net.Listener
	if err == nil {
		ln, lnTLS, err = listenBinary(cfg, sec) // tls.go
	}
	if err != nil {
		cfg.Store.Close()
		return nil, err
	}
	b := &Broker{
		sec:       sec,
		cfg:       cfg,
		log:       cfg.Logger,
		ln:        ln,
		lnTLS:     lnTLS,
		conns:     make(map[*conn]struct{}),
		stop:      make(chan struct{}),
		sweep:     make(chan struct{}, 1),
		started:   time.Now(),
		bufs:      bufs,
		unreadFor: unreadFor,
	}
	b.store = cfg.Store
	b.meter = b.memoryMeter()
	b.topics = newTopicRegistry(b)
	b.schemas = newSchemaRegistry(b.store.Metadata())
	err = b.recover()
	if err == nil {
		err = b.loadDynamicConfiguration() // dynamic_config.go
	}
	if err != nil {
		ln.Close()
		if lnTLS != nil {
			lnTLS.Close()
		}
		b.topics.close()
		b.store.Close()
		return nil, fmt.Errorf("broker: recover from storage: %w", err)
	}
	b.wg.Add(5)
	go b.acceptOn(ln, nil) // accept.go
	if lnTLS != nil {
		b.wg.Add(1)
		go b.acceptOn(lnTLS, nil)
	}
	go b.flushLoop()
	go b.expiryLoop()
	go b.retentionLoop() // ledgers.go
	go b.policyLoop()    // sub_expiry.go
	b.wg.Add(1)
	go b.compactionMonitor() // compaction_trigger.go
	return b, nil
}

func (c *Config) validate() error {
	switch c.AllowAutoTopicCreationType {
	case "non-partitioned", "partitioned":
	default:
		return fmt.Errorf("broker: allowAutoTopicCreationType %q: want non-partitioned or partitioned", c.AllowAutoTopicCreationType)
	}
	if c.DefaultNumPartitions < 1 {
		return fmt.Errorf("broker: defaultNumPartitions %d: must be at least 1", c.DefaultNumPartitions)
	}
	if c.MaxMessageSize < 1024 {
		return fmt.Errorf("broker: maxMessageSize %d: must be at least 1024", c.MaxMessageSize)
	}
	if c.KeepAliveInterval <= 0 {
		c.KeepAliveInterval = 30 * time.Second
	}
	if c.DelayedDeliveryTick <= 0 {
		c.DelayedDeliveryTick = time.Second
	}
	if c.RetentionCheckInterval <= 0 {
		c.RetentionCheckInterval = 120 * time.Second
	}
	if c.MessageExpiryCheckInterval <= 0 {
		c.MessageExpiryCheckInterval = 5 * time.Minute
	}
	if c.TTLDurationDefault < 0 {
		return fmt.Errorf("broker: ttlDurationDefaultInSeconds %v: must not be negative", c.TTLDurationDefault)
	}
	if err := c.validatePolicyDefaults(); err != nil { // brokerconf_policies.go
		return err
	}
	return c.validateLimits() // limits.go
}

// now is the broker's clock (Config.Clock): what rates, snapshot intervals and the age of
// messages (ttl.go) are measured by.
func (b *Broker) now() time.Time { return b.cfg.Clock() }

// Addr is the host:port the binary protocol listens on.
func (b *Broker) Addr() string { return b.ln.Addr().String() }

// ServiceURL is the pulsar:// URL of the main listener (pulsar+ssl:// when it speaks TLS)
// clients connect to, and what LOOKUP answers; ServiceURLTLS (tls.go) is the TLS one's.
func (b *Broker) ServiceURL() string {
	if b.plainIsTLS() {
		return "pulsar+ssl://" + b.advertise(b.ln)
	}
	return "pulsar://" + b.advertise(b.ln)
}

// advertise is the address LOOKUP gives for listener ln: the advertised address, a bare
// advertised host with ln's real port, or ln's address.
func (b *Broker) advertise(ln net.Listener) string {
	adv := b.cfg.AdvertisedAddr
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	switch {
	case adv == "":
		return ln.Addr().String()
	case ln == b.lnTLS:
		// An advertised host:port names the main listener; the TLS one keeps its own port.
		if h, _, err := net.SplitHostPort(adv); err == nil {
			adv = h
		}
		return net.JoinHostPort(adv, port)
	}
	if _, _, err := net.SplitHostPort(adv); err == nil {
		return adv
	}
	return net.JoinHostPort(adv, port)
}

// Config returns the configuration the broker runs with.
func (b *Broker) Config() Config { return b.cfg }

// Close stops accepting, closes every connection and waits for the broker's goroutines. It is
// safe to call more than once.
func (b *Broker) Close() error {
	b.closeOnce.Do(func() {
		close(b.stop)
		b.ln.Close()
		if b.lnTLS != nil {
			b.lnTLS.Close()
		}
		b.mu.Lock()
		b.closed = true
		conns := make([]*conn, 0, len(b.conns))
		for c := range b.conns {
			conns = append(conns, c)
		}
		b.mu.Unlock()
		for _, c := range conns {
			c.close("broker shutting down")
		}
	})
	b.wg.Wait()
	b.closeStore.Do(func() {
		// Connections and the flusher are gone: persist the final cursors, then close the logs.
		b.flushCursors(true)
		b.topics.close()
		if err := b.store.Close(); err != nil {
			b.log.Error("closing storage", "err", err)
		}
	})
	return nil
}

func (b *Broker) forgetConn(c *conn) {
	b.mu.Lock()
	b.forgetLocked(c)
	b.mu.Unlock()
}

// Direction says which way an intercepted command travels.
type Direction int

const (
	Inbound  Direction = iota // client → broker
	Outbound                  // broker → client
)

// Verdict is what an Interceptor decides for one command.
type Verdict struct {
	Drop       bool // do not handle (inbound) or do not send (outbound)
	Disconnect bool // close the connection instead
	// Delay waits before handling an inbound command, which blocks that connection's reading;
	// an outbound command alone is sent later, so frames sent after it can overtake it.
	Delay time.Duration
	// Fail answers an inbound command with this error instead of handling it: SEND_ERROR for
	// SEND, ERROR (or the typed response) for requests.
	Fail *pb.ServerError
}

// Interceptor is a test hook that sees every command on every connection. An outbound command,
// and an inbound SEND or ACK, is the interceptor's only for the call (the sender, or the
// connection's reader, builds the next one in the same memory): clone one to keep it.
type Interceptor func(dir Direction, cmd *pb.BaseCommand) Verdict

// Intercept installs fn (nil removes it). For tests: force errors, drop receipts, add delay.
func (b *Broker) Intercept(fn Interceptor) {
	if fn == nil {
		b.intercept.Store(nil)
		return
	}
	b.intercept.Store(&fn)
}

func (b *Broker) verdict(dir Direction, cmd *pb.BaseCommand) Verdict {
	fn := b.intercept.Load()
	if fn == nil {
		return Verdict{}
	}
	return (*fn)(dir, cmd)
}
