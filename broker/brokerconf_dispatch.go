package broker

import (
	"fmt"
	"strconv"
	"time"
)

// The broker.conf keys of dispatch to consumers (failover.go, keyshared.go), under upstream's
// names. They join confKeys (brokerconf.go) from here.

func init() {
	for k, v := range dispatchConfKeys {
		confKeys[k] = v
	}
}

var dispatchConfKeys = map[string]confSetter{
	"activeConsumerFailoverConsistentHashing":             boolKey(func(c *Config) *bool { return &c.ActiveConsumerFailoverConsistentHashing }),
	"subscriptionKeySharedUseConsistentHashing":           boolKey(func(c *Config) *bool { return &c.SubscriptionKeySharedUseConsistentHashing }),
	"subscriptionKeySharedConsistentHashingReplicaPoints": intKey(1, func(c *Config) *int { return &c.SubscriptionKeySharedConsistentHashingReplicaPoints }),
	// 0 is allowed, as upstream: no delay.
	"activeConsumerFailoverDelayTimeMillis": func(cfg *Config, _ *confState, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
		if n < 0 || n > int64(time.Hour/time.Millisecond) {
			return fmt.Errorf("%d: must be from 0 to %d (an hour)", n, time.Hour/time.Millisecond)
		}
		cfg.ActiveConsumerFailoverDelay = time.Duration(n) * time.Millisecond
		return nil
	},
}
