package broker

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/broker/policy"
)

// The broker.conf keys of the broker's policy defaults (Config.Defaults, broker/policy) and of
// the checks that apply them.

// Upstream's default check intervals.
const (
	defaultSubscriptionExpiryCheck = 5 * time.Minute
	defaultBacklogQuotaCheck       = 60 * time.Second
	defaultInactiveTopicsCheck     = 60 * time.Second
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

	"maxUnackedMessagesPerSubscription": intKey(0, func(c *Config) *int { return &c.MaxUnackedMessagesPerSubscription }),
	"delayedDeliveryMaxDelayInMillis": func(cfg *Config, _ *confState, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%q: want 0 (no limit) or milliseconds", v)
		}
		cfg.DelayedDeliveryMaxDelay = time.Duration(n) * time.Millisecond
		return nil
	},
	"maxPublishRatePerTopicInMessages":            intKey(0, func(c *Config) *int { return &c.MaxPublishRatePerTopicInMessages }),
	"maxPublishRatePerTopicInBytes":               int64Key(0, func(c *Config) *int64 { return &c.MaxPublishRatePerTopicInBytes }),
	"dispatchThrottlingRatePerTopicInMsg":         intKey(0, func(c *Config) *int { return &c.DispatchThrottlingRatePerTopicInMsg }),
	"dispatchThrottlingRatePerTopicInByte":        int64Key(0, func(c *Config) *int64 { return &c.DispatchThrottlingRatePerTopicInByte }),
	"dispatchThrottlingRatePerSubscriptionInMsg":  intKey(0, func(c *Config) *int { return &c.DispatchThrottlingRatePerSubscriptionInMsg }),
	"dispatchThrottlingRatePerSubscriptionInByte": int64Key(0, func(c *Config) *int64 { return &c.DispatchThrottlingRatePerSubscriptionInByte }),
	"dispatchThrottlingRateRelativeToPublishRate": boolKey(func(c *Config) *bool { return &c.DispatchThrottlingRateRelativeToPublishRate }),
	"subscribeThrottlingRatePerConsumer":          intKey(0, func(c *Config) *int { return &c.SubscribeThrottlingRatePerConsumer }),
	"subscribeRatePeriodPerConsumerInSecond":      intKey(1, func(c *Config) *int { return &c.SubscribeRatePeriodPerConsumerInSecond }),
	"brokerDeduplicationSnapshotIntervalSeconds":  intKey(0, func(c *Config) *int { return &c.BrokerDeduplicationSnapshotIntervalSeconds }),
	"brokerDeduplicationEntriesInterval":          intKey(1, func(c *Config) *int { return &c.BrokerDeduplicationEntriesInterval }),
	"brokerDeleteInactiveTopicsEnabled":           boolKey(func(c *Config) *bool { return &c.BrokerDeleteInactiveTopicsEnabled }),
	"brokerDeleteInactiveTopicsMode": func(cfg *Config, _ *confState, v string) error {
		switch v {
		case policy.DeleteWhenNoSubscriptions, policy.DeleteWhenSubscriptionsCaughtUp:
			cfg.BrokerDeleteInactiveTopicsMode = v
			return nil
		}
		return fmt.Errorf("%q: want %s or %s", v, policy.DeleteWhenNoSubscriptions, policy.DeleteWhenSubscriptionsCaughtUp)
	},
	"brokerDeleteInactiveTopicsMaxInactiveDurationSeconds": intKey(1, func(c *Config) *int { return &c.BrokerDeleteInactiveTopicsMaxInactiveDurationSeconds }),
	"brokerDeleteInactiveTopicsFrequencySeconds":           durationKey(time.Second, func(c *Config) *time.Duration { return &c.InactiveTopicsCheckInterval }),
	"isSchemaValidationEnforced":                           boolKey(func(c *Config) *bool { return &c.IsSchemaValidationEnforced }),
	"isAllowAutoUpdateSchemaEnabled":                       boolKey(func(c *Config) *bool { return &c.IsAllowAutoUpdateSchemaEnabled }),
	"dispatcherPauseOnAckStatePersistentEnabled":           boolKey(func(c *Config) *bool { return &c.DispatcherPauseOnAckStatePersistentEnabled }),
	"subscriptionTypesEnabled": func(cfg *Config, _ *confState, v string) error {
		var types []string
		for _, t := range strings.Split(v, ",") {
			t = strings.TrimSpace(t)
			if !slices.Contains(policy.SubscriptionTypes, t) {
				return fmt.Errorf("%q: not a subscription type (want %s)", t, strings.Join(policy.SubscriptionTypes, ", "))
			}
			types = append(types, t)
		}
		cfg.SubscriptionTypesEnabled = types
		return nil
	},
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

// validatePolicyDefaults checks the policy defaults that can be wrong and gives a Config built
// by hand, rather than from DefaultConfig, upstream's values where it left them unset.
func (c *Config) validatePolicyDefaults() error {
	for _, l := range []struct {
		key string
		v   int64
	}{
		{"maxUnackedMessagesPerConsumer", int64(c.MaxUnackedMessagesPerConsumer)},
		{"maxUnackedMessagesPerSubscription", int64(c.MaxUnackedMessagesPerSubscription)},
		{"maxPublishRatePerTopicInMessages", int64(c.MaxPublishRatePerTopicInMessages)},
		{"maxPublishRatePerTopicInBytes", c.MaxPublishRatePerTopicInBytes},
		{"dispatchThrottlingRatePerTopicInMsg", int64(c.DispatchThrottlingRatePerTopicInMsg)},
		{"dispatchThrottlingRatePerTopicInByte", c.DispatchThrottlingRatePerTopicInByte},
		{"dispatchThrottlingRatePerSubscriptionInMsg", int64(c.DispatchThrottlingRatePerSubscriptionInMsg)},
		{"dispatchThrottlingRatePerSubscriptionInByte", c.DispatchThrottlingRatePerSubscriptionInByte},
		{"subscribeThrottlingRatePerConsumer", int64(c.SubscribeThrottlingRatePerConsumer)},
		{"brokerDeduplicationSnapshotIntervalSeconds", int64(c.BrokerDeduplicationSnapshotIntervalSeconds)},
		{"delayedDeliveryMaxDelayInMillis", int64(c.DelayedDeliveryMaxDelay)},
	} {
		if l.v < 0 {
			return fmt.Errorf("broker: %s %d: must not be negative", l.key, l.v)
		}
	}
	for _, t := range c.SubscriptionTypesEnabled {
		if !slices.Contains(policy.SubscriptionTypes, t) {
			return fmt.Errorf("broker: subscriptionTypesEnabled: %q is not a subscription type", t)
		}
	}
	switch c.BrokerDeleteInactiveTopicsMode {
	case "":
		c.BrokerDeleteInactiveTopicsMode = policy.DeleteWhenNoSubscriptions
	case policy.DeleteWhenNoSubscriptions, policy.DeleteWhenSubscriptionsCaughtUp:
	default:
		return fmt.Errorf("broker: brokerDeleteInactiveTopicsMode %q: want %s or %s", c.BrokerDeleteInactiveTopicsMode,
			policy.DeleteWhenNoSubscriptions, policy.DeleteWhenSubscriptionsCaughtUp)
	}
	if len(c.SubscriptionTypesEnabled) == 0 {
		c.SubscriptionTypesEnabled = slices.Clone(policy.SubscriptionTypes)
	}
	for _, d := range []struct {
		v   *int
		def int
	}{
		{&c.SubscribeRatePeriodPerConsumerInSecond, 30},
		{&c.BrokerDeleteInactiveTopicsMaxInactiveDurationSeconds, 60},
		{&c.BrokerDeduplicationEntriesInterval, 1000},
	} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return nil
}

// every returns d, or def when d is not set.
func every(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
