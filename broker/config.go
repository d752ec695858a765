package broker

import (
	"log/slog"
	"slices"
	"time"

	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
)

// Config holds the broker settings that upstream keeps in broker.conf, under upstream's names
// where one exists. The zero value is not useful; start from DefaultConfig.
type Config struct {
	// ListenAddr is the binary-protocol listener, host:port; port 0 picks a free port.
	ListenAddr string
	// AdvertisedAddr, when set, is the host:port returned by LOOKUP instead of the listener's;
	// a bare host (upstream's advertisedAddress) is advertised with each listener's real port.
	AdvertisedAddr string

	ClusterName                   string
	AllowAutoTopicCreation        bool
	AllowAutoTopicCreationType    string // "non-partitioned" or "partitioned"
	DefaultNumPartitions          int
	AllowAutoSubscriptionCreation bool
	MaxMessageSize                int
	KeepAliveInterval             time.Duration
	// AcknowledgmentAtBatchIndexLevelEnabled honours ack_set on ACK and sends ack_set on
	// redelivery of partially acknowledged batches.
	AcknowledgmentAtBatchIndexLevelEnabled bool
	// ActiveConsumerFailoverDelay is upstream's activeConsumerFailoverDelayTimeMillis: how long
	// a Failover subscription waits after its active consumer changes before it dispatches
	// again and tells its consumers (0: at once). See failover.go.
	ActiveConsumerFailoverDelay time.Duration
	// ActiveConsumerFailoverConsistentHashing is upstream's key of the same name: partitions
	// too pick their active consumer by hash ring, not by partition index (failover.go).
	ActiveConsumerFailoverConsistentHashing bool
	// SubscriptionKeySharedUseConsistentHashing and
	// SubscriptionKeySharedConsistentHashingReplicaPoints are upstream's keys of the same
	// names: how Key_Shared subscriptions share the hash range among AUTO_SPLIT consumers,
	// consistent hashing at that many points per consumer (true, upstream's default) or
	// splitting the largest range in halves (false). See keyshared.go.
	SubscriptionKeySharedUseConsistentHashing           bool
	SubscriptionKeySharedConsistentHashingReplicaPoints int

	// Store keeps topics' data and metadata; nil means a fresh in-memory store. The broker
	// owns it from New on and closes it on Close.
	Store storage.Store
	// CursorFlushInterval batches cursor updates into one metadata write per interval.
	CursorFlushInterval time.Duration
	// FrameBufferPool bounds the idle frame buffers kept for reuse: large SEND frames are read
	// into pooled buffers, stored as they are and reused once trimmed and written to every
	// consumer, and the in-memory store copies small entries into them (0: none kept); a pool
	// unused for a minute gives them back. With a MemoryLimit the pool keeps at most a quarter of
	// it. The default is sized for the ledgers busy topics free together: topics sent to at
	// the same pace fill and free their 2 MiB ledgers within moments of each other, and what
	// the pool cannot keep then is fresh memory for the next entries, and garbage collection
	// cycles that one CPU feels in every producer's latency. PoisonFrameBuffers
	// overwrites a buffer as it goes back, so that a buffer reused too early shows as corrupt
	// messages: for tests.
	FrameBufferPool    int64
	PoisonFrameBuffers bool
	// FrameBuffersOffHeap maps the frame buffers, and so the in-memory store's data, outside
	// Go's heap (Linux; wire.BufferPoolOptions.OffHeap): the garbage collector then starts a
	// cycle when the broker's own objects and garbage call for one, not each time the stored
	// data has doubled, and on one CPU each cycle was felt in every producer's latency. The
	// race detector does not see that memory; PoisonFrameBuffers still shows a buffer reused
	// too early.
	FrameBuffersOffHeap bool

	// TopicTombstoneTTL is how long a deleted topic's name may not be auto-created (PIP-139).
	TopicTombstoneTTL time.Duration

	// MessageExpiryCheckInterval is how often the broker expires messages (ttl.go).
	MessageExpiryCheckInterval time.Duration
	// CompactionMonitorInterval is upstream's brokerServiceCompactionMonitorIntervalInSeconds:
	// how often compaction thresholds are checked (compaction_trigger.go; 0: 60 s).
	CompactionMonitorInterval time.Duration

	// CompatUpstream makes the broker behave as an upstream broker: protocol v20 and no
	// extension fields.
	CompatUpstream bool

	// Limits on the connections clients may open (limits.go), under upstream's broker.conf
	// names; 0 means no limit, upstream's default. A connection over a limit is answered ERROR
	// NotAllowedError and closed. (The limits on producers, consumers and subscriptions are
	// policies, in Defaults.)
	BrokerMaxConnections      int
	BrokerMaxConnectionsPerIP int
	// ManagedLedgerMaxUnackedRangesToPersist bounds the ranges of individually acknowledged
	// entries stored with a cursor (upstream's default, 10000); the rest stay in memory and a
	// crash redelivers them, as upstream.
	ManagedLedgerMaxUnackedRangesToPersist int

	// Ledger rollover and retention checks (ledgers.go), under upstream's broker.conf names:
	// managedLedgerMaxEntriesPerLedger, managedLedgerMaxSizePerLedgerMbytes,
	// managedLedgerMinLedgerRolloverTimeMinutes, managedLedgerMaxLedgerRolloverTimeMinutes
	// (storage.Rollover; its zero fields are upstream's defaults) and
	// retentionCheckIntervalInSeconds. The in-memory store created when Store is nil uses
	// Rollover, but for two zero fields chosen for memory (storage.MemoryStoreOptions: ledgers
	// full at 2 MiB, no minimum age); a store passed in has its own.
	Rollover               storage.Rollover
	RetentionCheckInterval time.Duration

	// MemoryLimit is the memory budget of in-memory data in bytes (0: none; `letterbox broker
	// --memory-limit`). Past it the broker acts as if every persistent topic exceeded its
	// backlog quota, as BacklogQuotaDefaultRetentionPolicy says (quota.go), so that a backlog
	// nobody reads cannot grow the process until the kernel kills it. Stores that keep data
	// on disk are not budgeted.
	MemoryLimit int64
	// OpenFileLimit and FileInfoMaxIdle bound the segment files a durable store keeps open
	// (storage.FileStoreOptions' OpenFiles and FileIdle; brokerconf_storage.go). 0: the store's
	// defaults. `letterbox broker` passes them to the store it opens; a store passed in as
	// Store has its own.
	OpenFileLimit   int
	FileInfoMaxIdle time.Duration
	// Defaults are the broker's values of the policies namespaces and topics may override
	// (broker/policy; their broker.conf keys in brokerconf_policies.go and brokerconf_limits.go). A
	// producer, consumer or subscription over its limit is refused (ProducerBusy, ConsumerBusy,
	// NotAllowedError) and the connection stays.
	policy.Defaults
	// SubscriptionExpiryCheckInterval (subscriptionExpiryCheckIntervalInMinutes, 5 minutes) is
	// how often the broker deletes expired subscriptions (sub_expiry.go);
	// BacklogQuotaCheckInterval (backlogQuotaCheckIntervalInSeconds, 60 s) how often topics
	// over their backlog quota are acted on (backlog_quota.go). Zero: upstream's default.
	SubscriptionExpiryCheckInterval time.Duration
	BacklogQuotaCheckInterval       time.Duration
	// InactiveTopicsCheckInterval (brokerDeleteInactiveTopicsFrequencySeconds, 60 s) is how
	// often inactive topics are looked for (inactive_topics.go).
	InactiveTopicsCheckInterval time.Duration
	// BrokerDeduplicationEntriesInterval is upstream's brokerDeduplicationEntriesInterval: a
	// deduplicating topic stores its producers' sequence ids after that many entries (dedup.go),
	// besides every deduplication snapshot interval.
	BrokerDeduplicationEntriesInterval int
	// DelayedDeliveryDeliverAtTimeStrict is upstream's isDelayedDeliveryDeliverAtTimeStrict:
	// a delayed message is delivered no earlier than its deliver-at time; by default (false,
	// as upstream) it may go up to a tick early (dispatch.go).
	DelayedDeliveryDeliverAtTimeStrict bool
	// Clock is the time the broker's rate limiters, snapshot intervals and message expiry read
	// (nil: time.Now); tests set a fake one to measure rates and age messages without waiting.
	Clock func() time.Time
	// keepAliveTicks makes each connection's keepalive ticker (conn.keepAlive); nil: a
	// time.Ticker of KeepAliveInterval. Tests of this package tick by hand with it.
	keepAliveTicks func() (ticks <-chan time.Time, stop func())

	// The admin listener (broker/web). HTTPMaxRequestSize is upstream's httpMaxRequestSize, the
	// largest request body accepted; upstream's default, -1, means letterbox's own limit of
	// 5 MiB (upstream's default maxMessageSize). MaxConcurrentHTTPRequests (upstream's
	// maxConcurrentHttpRequests) bounds the requests being handled at once; more wait for a
	// slot, and those still waiting after HTTPReadTimeout are answered 503.
	// MaxHTTPServerConnections (upstream's maxHttpServerConnections) bounds open connections;
	// more wait in the listen queue. The timeouts bound reading a request's header, reading
	// the whole request, writing its answer (from the end of its header, a wait for a slot
	// included: longer than the read timeout) and an idle keep-alive connection, so a client
	// that announces a body and never sends it, or never reads its answer, cannot hold a
	// connection or a request slot for good. They are letterbox's own (brokerconf_limits.go).
	HTTPMaxRequestSize        int64
	MaxConcurrentHTTPRequests int
	MaxHTTPServerConnections  int
	HTTPReadHeaderTimeout     time.Duration
	HTTPReadTimeout           time.Duration
	HTTPWriteTimeout          time.Duration
	HTTPIdleTimeout           time.Duration

	// Security (auth_check.go, auth_conn.go, tls.go; broker.conf keys in brokerconf_auth.go). All off
	// by default. AuthenticationEnabled needs TokenSecretKey or TokenPublicKey, in upstream's
	// forms (file:///path, data:;base64,..., a path); the role is the TokenAuthClaim claim
	// (default sub). AuthorizationEnabled needs authentication; SuperUserRoles may do anything.
	// AuthenticationRefreshCheck (default 60s) is how often expired credentials are
	// challenged. AuthenticationProviders are upstream's provider class names (token, tls,
	// basic); empty means the token provider alone. BasicAuthConf is the basic provider's users
	// file (upstream's forms); AnonymousUserRole is the role of clients that present no
	// credentials a provider takes. With TLSCertFile and TLSKeyFile the listeners speak TLS:
	// beside the plain ones on BrokerServicePortTLS and WebServicePortTLS when set, instead of
	// them otherwise. Client certificates are checked against TLSTrustCertsFile (the system's
	// CAs when empty), required with TLSRequireTrustedClientCertOnConnect, and taken unchecked
	// with TLSAllowInsecureConnection, as upstream (tls.go).
	AuthenticationEnabled                bool
	AuthorizationEnabled                 bool
	AuthenticationProviders              []string
	TokenSecretKey                       string
	TokenPublicKey                       string
	TokenAuthClaim                       string
	BasicAuthConf                        string
	AnonymousUserRole                    string
	SuperUserRoles                       []string
	AuthenticationRefreshCheck           time.Duration
	TLSCertFile                          string
	TLSKeyFile                           string
	TLSTrustCertsFile                    string
	TLSRequireTrustedClientCertOnConnect bool
	TLSAllowInsecureConnection           bool
	BrokerServicePortTLS                 string
	WebServicePortTLS                    string
	// WebServicePort is broker.conf's port of the admin listener, which its creator (the CLI)
	// applies; the broker itself does not listen on it.
	WebServicePort string

	Logger *slog.Logger
}

// DefaultConfig returns upstream's defaults for a single local broker (see docs/design.md).
func DefaultConfig() Config {
	return Config{
		ListenAddr:                                          "127.0.0.1:0",
		ClusterName:                                         "standalone",
		AllowAutoTopicCreation:                              true,
		AllowAutoTopicCreationType:                          "non-partitioned",
		DefaultNumPartitions:                                1,
		AllowAutoSubscriptionCreation:                       true,
		MaxMessageSize:                                      wire.DefaultMaxMessageSize,
		KeepAliveInterval:                                   30 * time.Second,
		AcknowledgmentAtBatchIndexLevelEnabled:              true,
		ActiveConsumerFailoverDelay:                         time.Second,
		SubscriptionKeySharedUseConsistentHashing:           true,
		SubscriptionKeySharedConsistentHashingReplicaPoints: 100,
		CursorFlushInterval:                                 100 * time.Millisecond,
		FrameBufferPool:                                     256 << 20,
		FrameBuffersOffHeap:                                 true,
		TopicTombstoneTTL:                                   60 * time.Second,
		MessageExpiryCheckInterval:                          5 * time.Minute,
		CompactionMonitorInterval:                           defaultCompactionMonitorInterval,
		ManagedLedgerMaxUnackedRangesToPersist:              10000,
		RetentionCheckInterval:                              120 * time.Second,
		Defaults: policy.Defaults{
			DelayedDeliveryEnabled:                               true,
			DelayedDeliveryTick:                                  time.Second,
			MaxUnackedMessagesPerConsumer:                        50000,
			MaxUnackedMessagesPerSubscription:                    4 * 50000,
			BacklogQuotaDefaultRetentionPolicy:                   policy.QuotaProducerRequestHold,
			SubscribeRatePeriodPerConsumerInSecond:               30,
			BrokerDeduplicationSnapshotIntervalSeconds:           120,
			BrokerDeleteInactiveTopicsMode:                       policy.DeleteWhenNoSubscriptions,
			BrokerDeleteInactiveTopicsMaxInactiveDurationSeconds: 60,
			IsAllowAutoUpdateSchemaEnabled:                       true,
			SubscriptionTypesEnabled:                             slices.Clone(policy.SubscriptionTypes),
		},
		BrokerDeduplicationEntriesInterval: 1000,
		HTTPMaxRequestSize:                 -1,
		MaxConcurrentHTTPRequests:          1024,
		MaxHTTPServerConnections:           2048,
		HTTPReadHeaderTimeout:              10 * time.Second,
		HTTPReadTimeout:                    30 * time.Second,
		HTTPWriteTimeout:                   time.Minute,
		HTTPIdleTimeout:                    2 * time.Minute,
		Logger:                             slog.Default(),
	}
}

// Option adjusts a Config before the broker starts.
type Option func(*Config)

// WithListen sets the binary-protocol listen address.
func WithListen(addr string) Option { return func(c *Config) { c.ListenAddr = addr } }

// WithConfig replaces the whole configuration.
func WithConfig(cfg Config) Option { return func(c *Config) { *c = cfg } }

// WithStore sets where the broker keeps data (see Config.Store).
func WithStore(s storage.Store) Option { return func(c *Config) { c.Store = s } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(c *Config) { c.Logger = l } }
