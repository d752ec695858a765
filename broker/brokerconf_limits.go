package broker

import (
	"fmt"
	"strconv"
	"time"

	"github.com/letterbox-dev/letterbox/broker/policy"
)

// The broker.conf keys of the limits (limits.go, quota.go, the admin listener), under
// upstream's names and with upstream's meaning of 0 (no limit), and the admin listener's
// timeouts, letterbox's own. They join confKeys (brokerconf.go) from here so that the limits stay
// in one place.

func init() {
	for k, v := range limitConfKeys {
		confKeys[k] = v
	}
}

var limitConfKeys = map[string]confSetter{
	"brokerMaxConnections":                   intKey(0, func(c *Config) *int { return &c.BrokerMaxConnections }),
	"brokerMaxConnectionsPerIp":              intKey(0, func(c *Config) *int { return &c.BrokerMaxConnectionsPerIP }),
	"maxProducersPerTopic":                   intKey(0, func(c *Config) *int { return &c.MaxProducersPerTopic }),
	"maxConsumersPerTopic":                   intKey(0, func(c *Config) *int { return &c.MaxConsumersPerTopic }),
	"maxConsumersPerSubscription":            intKey(0, func(c *Config) *int { return &c.MaxConsumersPerSubscription }),
	"maxSubscriptionsPerTopic":               intKey(0, func(c *Config) *int { return &c.MaxSubscriptionsPerTopic }),
	"managedLedgerMaxUnackedRangesToPersist": intKey(0, func(c *Config) *int { return &c.ManagedLedgerMaxUnackedRangesToPersist }),
	"maxConcurrentHttpRequests":              intKey(0, func(c *Config) *int { return &c.MaxConcurrentHTTPRequests }),
	"maxHttpServerConnections":               intKey(0, func(c *Config) *int { return &c.MaxHTTPServerConnections }),
	// Upstream's -1 (and any value below 1) means no limit of its own: letterbox's 5 MiB.
	"httpMaxRequestSize": func(cfg *Config, _ *confState, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
		if n < -1 {
			return fmt.Errorf("%d: want -1 (the default limit) or a size in bytes", n)
		}
		cfg.HTTPMaxRequestSize = n
		return nil
	},
	// The admin listener's timeouts, in seconds: letterbox's own keys (upstream's are Jetty's,
	// with no broker.conf keys), named as upstream names its HTTP settings.
	"httpReadHeaderTimeoutSeconds": durationKey(time.Second, func(c *Config) *time.Duration { return &c.HTTPReadHeaderTimeout }),
	"httpReadTimeoutSeconds":       durationKey(time.Second, func(c *Config) *time.Duration { return &c.HTTPReadTimeout }),
	"httpWriteTimeoutSeconds":      durationKey(time.Second, func(c *Config) *time.Duration { return &c.HTTPWriteTimeout }),
	"httpIdleTimeoutSeconds":       durationKey(time.Second, func(c *Config) *time.Duration { return &c.HTTPIdleTimeout }),
	"backlogQuotaDefaultRetentionPolicy": func(cfg *Config, _ *confState, v string) error {
		switch v {
		case policy.QuotaProducerRequestHold, policy.QuotaProducerException, policy.QuotaConsumerBacklogEviction:
			cfg.BacklogQuotaDefaultRetentionPolicy = v
			return nil
		}
		return fmt.Errorf("%q: want %s, %s or %s", v, policy.QuotaProducerRequestHold, policy.QuotaProducerException, policy.QuotaConsumerBacklogEviction)
	},
}
