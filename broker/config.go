package broker

import (
	"log/slog"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
)

// Config holds the broker settings that upstream keeps in broker.conf, under upstream's names
// where one exists. The zero value is not useful; start from DefaultConfig.
type Config struct {
	// ListenAddr is the binary-protocol listener, host:port; port 0 picks a free port.
	ListenAddr string
	// AdvertisedAddr, when set, is the host:port returned by LOOKUP instead of the listener's.
	AdvertisedAddr string

	ClusterName                   string
	AllowAutoTopicCreation        bool
	AllowAutoTopicCreationType    string // "non-partitioned" or "partitioned"
	DefaultNumPartitions          int
	AllowAutoSubscriptionCreation bool
	MaxMessageSize                int
	DelayedDeliveryEnabled        bool
	DelayedDeliveryTick           time.Duration
	KeepAliveInterval             time.Duration
	// AcknowledgmentAtBatchIndexLevelEnabled honours ack_set on ACK and sends ack_set on
	// redelivery of partially acknowledged batches.
	AcknowledgmentAtBatchIndexLevelEnabled bool
	MaxUnackedMessagesPerConsumer          int

	// Store keeps topics' data and metadata; nil means a fresh in-memory store. The broker
	// owns it from New on and closes it on Close.
	Store storage.Store
	// CursorFlushInterval batches cursor updates into one metadata write per interval.
	CursorFlushInterval time.Duration
	// FrameBufferPool bounds the idle frame buffers kept for reuse: large SEND frames are read
	// into pooled buffers, stored as they are and reused once trimmed and written to every
	// consumer (0: none kept); a pool unused for 10 s gives them back. PoisonFrameBuffers
	// overwrites a buffer as it goes back, so that a buffer reused too early shows as corrupt
	// messages: for tests.
	FrameBufferPool    int64
	PoisonFrameBuffers bool

	// BrokerDeduplicationEnabled turns deduplication on for namespaces without a policy.
	BrokerDeduplicationEnabled bool
	// TopicTombstoneTTL is how long a deleted topic's name may not be auto-created (PIP-139).
	TopicTombstoneTTL time.Duration

	// TTLDurationDefault is the message TTL of namespaces without a message_ttl_in_seconds
	// policy (0: messages never expire); MessageExpiryCheckInterval is how often the broker
	// expires messages (ttl.go).
	TTLDurationDefault         time.Duration
	MessageExpiryCheckInterval time.Duration

	// CompatUpstream makes the broker behave as an upstream broker: protocol v20 and no
	// extension fields.
	CompatUpstream bool

	// Security (auth_check.go, auth_conn.go, tls.go; broker.conf keys in auth_conf.go). All off
	// by default. AuthenticationEnabled needs TokenSecretKey or TokenPublicKey, in upstream's
	// forms (file:///path, data:;base64,..., a path); the role is the TokenAuthClaim claim
	// (default sub). AuthorizationEnabled needs authentication; SuperUserRoles may do anything.
	// AuthenticationRefreshCheck (default 60s) is how often expired credentials are
	// challenged. With TLSCertFile and TLSKeyFile both listeners speak TLS, the binary one on
	// BrokerServicePortTLS when set.
	AuthenticationEnabled      bool
	AuthorizationEnabled       bool
	TokenSecretKey             string
	TokenPublicKey             string
	TokenAuthClaim             string
	SuperUserRoles             []string
	AuthenticationRefreshCheck time.Duration
	TLSCertFile                string
	TLSKeyFile                 string
	BrokerServicePortTLS       string

	Logger *slog.Logger
}

// DefaultConfig returns upstream's defaults for a single local broker (see DESIGN.md).
func DefaultConfig() Config {
	return Config{
		ListenAddr:                             "127.0.0.1:0",
		ClusterName:                            "standalone",
		AllowAutoTopicCreation:                 true,
		AllowAutoTopicCreationType:             "non-partitioned",
		DefaultNumPartitions:                   1,
		AllowAutoSubscriptionCreation:          true,
		MaxMessageSize:                         wire.DefaultMaxMessageSize,
		DelayedDeliveryEnabled:                 true,
		DelayedDeliveryTick:                    time.Second,
		KeepAliveInterval:                      30 * time.Second,
		AcknowledgmentAtBatchIndexLevelEnabled: true,
		MaxUnackedMessagesPerConsumer:          50000,
		CursorFlushInterval:                    100 * time.Millisecond,
		FrameBufferPool:                        32 << 20,
		TopicTombstoneTTL:                      60 * time.Second,
		MessageExpiryCheckInterval:             5 * time.Minute,
		Logger:                                 slog.Default(),
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
