package broker

import (
	"fmt"
	"strconv"
	"time"
)

// The broker.conf keys of the broker's policy defaults (Config.Defaults, broker/policy) and of
// the checks that apply them.

// Upstream's default check intervals.
const (
	defaultSubscriptionExpiryCheck = 5 * time.Minute
	defaultBacklogQuotaCheck       = 60 * time.Second
)

func init() {
	for k, v := range policyConfKeys {
		confKeys[k] = v
	}
}

var policyConfKeys = map[string]confSetter{
	"maxTopicsPerNamespace":                    intKey(0, func(c *Config) *int { return &c.MaxTopicsPerNamespace }),
	"subscriptionExpirationTimeMinutes":        intKey(0, func(c *Config) *int { return &c.SubscriptionExpirationTimeMinutes }),
	"subscriptionExpiryCheckIntervalInMinutes": durationKey(time.Minute, func(c *Config) *time.Duration { return &c.SubscriptionExpiryCheckInterval }),
	"backlogQuotaCheckIntervalInSeconds":       durationKey(time.Second, func(c *Config) *time.Duration { return &c.BacklogQuotaCheckInterval }),
	"backlogQuotaDefaultLimitSecond":           intKey(-1, func(c *Config) *int { return &c.BacklogQuotaDefaultLimitSecond }),
	"backlogQuotaDefaultLimitBytes":            int64Key(-1, func(c *Config) *int64 { return &c.BacklogQuotaDefaultLimitBytes }),
	// Upstream's deprecated key, in GB.
	"backlogQuotaDefaultLimitGB": func(cfg *Config, _ *confState, v string) error {
		gb, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", v)
		}
		if gb > 0 && cfg.BacklogQuotaDefaultLimitBytes <= 0 {
			cfg.BacklogQuotaDefaultLimitBytes = int64(gb * (1 << 30))
		}
		return nil
	},
	"brokerServiceCompactionThresholdInBytes": int64Key(0, func(c *Config) *int64 { return &c.BrokerServiceCompactionThreshold }),
}

func int64Key(minimum int64, field func(*Config) *int64) confSetter {
	return func(cfg *Config, _ *confState, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
		if n < minimum {
			return fmt.Errorf("%d: must be at least %d", n, minimum)
		}
		*field(cfg) = n
		return nil
	}
}

// every returns d, or def when d is not set.
func every(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
