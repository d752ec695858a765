package broker

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Dynamic configuration (upstream's /admin/v2/brokers/configuration...): the keys upstream
// marks dynamic that letterbox honours, overridden at run time without a restart. As upstream
// keeps the overrides in its metadata store, letterbox keeps them in the store's metadata
// (bucketDynamicConfig), so a durable broker starts again with them. Every other key, known or
// not, is refused with 412 as upstream refuses non-dynamic ones.

// bucketDynamicConfig holds the overrides: key → value.
const bucketDynamicConfig = "dynamic-config"

// dynamicKeys are the dynamic keys letterbox honours, each with how its value applies. As
// upstream, a stored value is applied as the key's field type reads it: a boolean is true when
// the value is "true" in any case and false otherwise (Java's Boolean.valueOf); a value that
// does not read as a number or a topic type is not applied (upstream's listener fails on it and
// logs), and the key keeps the value it had.
var dynamicKeys = map[string]func(v string, d *dynamicValues) bool{
	"allowAutoTopicCreation": func(v string, d *dynamicValues) bool {
		d.allowAutoTopicCreation = strings.EqualFold(v, "true")
		return true
	},
	"allowAutoTopicCreationType": func(v string, d *dynamicValues) bool {
		// Upstream's TopicType enum reads either spelling, in any case.
		switch strings.ToLower(strings.ReplaceAll(v, "_", "-")) {
		case "partitioned":
			d.allowAutoTopicCreationType = "partitioned"
		case "non-partitioned":
			d.allowAutoTopicCreationType = "non-partitioned"
		default:
			return false
		}
		return true
	},
	"defaultNumPartitions": func(v string, d *dynamicValues) bool {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return false
		}
		d.defaultNumPartitions = n
		return true
	},
	"allowAutoSubscriptionCreation": func(v string, d *dynamicValues) bool {
		d.allowAutoSubscriptionCreation = strings.EqualFold(v, "true")
		return true
	},
}

// dynamicValues are the dynamic keys' values in effect, and the overrides they came from.
type dynamicValues struct {
	allowAutoTopicCreation        bool
	allowAutoTopicCreationType    string
	defaultNumPartitions          int
	allowAutoSubscriptionCreation bool
	overrides                     map[string]string
}

// dynamicConfig holds the values in effect; updates are serialized by mu, reads take none.
type dynamicConfig struct {
	mu  sync.Mutex
	cur atomic.Pointer[dynamicValues]
}

// dynamic returns the dynamic keys' values in effect.
func (b *Broker) dynamic() *dynamicValues {
	if d := b.dyn.cur.Load(); d != nil {
		return d
	}
	return b.dynamicFrom(nil)
}

// dynamicFrom computes the values of the configuration with overrides applied (all valid).
func (b *Broker) dynamicFrom(overrides map[string]string) *dynamicValues {
	d := &dynamicValues{
		allowAutoTopicCreation:        b.cfg.AllowAutoTopicCreation,
		allowAutoTopicCreationType:    b.cfg.AllowAutoTopicCreationType,
		defaultNumPartitions:          b.cfg.DefaultNumPartitions,
		allowAutoSubscriptionCreation: b.cfg.AllowAutoSubscriptionCreation,
		overrides:                     overrides,
	}
	for k, v := range overrides {
		if !dynamicKeys[k](v, d) {
			b.log.Warn("dynamic configuration value not applied: it does not read as the key's type", "key", k, "value", v)
		}
	}
	return d
}

// DynamicConfigurationNames lists the keys that may be updated at run time.
func (b *Broker) DynamicConfigurationNames() []string {
	return slices.Sorted(maps.Keys(dynamicKeys))
}

// DynamicConfiguration returns the keys overridden at run time and their values.
func (b *Broker) DynamicConfiguration() map[string]string {
	return maps.Clone(b.dynamic().overrides)
}

// UpdateDynamicConfiguration overrides key with value, in effect at once. A key that is not
// dynamic, or not one letterbox honours, is refused as upstream refuses non-dynamic keys. The
// value is stored as given, as upstream stores it (it validates only keys with a validator of
// their own, none of these): GET configuration/values answers it back, and how it applies is
// dynamicKeys' rule.
func (b *Broker) UpdateDynamicConfiguration(key, value string) error {
	if _, ok := dynamicKeys[key]; !ok {
		return adminErr(ErrPreconditionFailed, "Can't update non-dynamic configuration")
	}
	b.dyn.mu.Lock()
	defer b.dyn.mu.Unlock()
	overrides := maps.Clone(b.dynamic().overrides)
	if overrides == nil {
		overrides = map[string]string{}
	}
	overrides[key] = value
	if err := b.persistAdmin(bucketDynamicConfig, key, value); err != nil {
		return err
	}
	b.dyn.cur.Store(b.dynamicFrom(overrides))
	b.log.Info("dynamic configuration updated", "key", key, "value", value)
	return nil
}

// DeleteDynamicConfiguration drops key's override: the configured value is in effect again.
func (b *Broker) DeleteDynamicConfiguration(key string) error {
	if _, ok := dynamicKeys[key]; !ok {
		return adminErr(ErrPreconditionFailed, " Can't update non-dynamic configuration") // upstream's words
	}
	b.dyn.mu.Lock()
	defer b.dyn.mu.Unlock()
	overrides := maps.Clone(b.dynamic().overrides)
	delete(overrides, key)
	if err := b.persistAdmin(bucketDynamicConfig, key, nil); err != nil {
		return err
	}
	b.dyn.cur.Store(b.dynamicFrom(overrides))
	return nil
}

// loadDynamicConfiguration applies the overrides stored by an earlier run. One that is no
// longer valid (a key letterbox stopped honouring) is logged and left out.
func (b *Broker) loadDynamicConfiguration() error {
	overrides := map[string]string{}
	err := b.store.Metadata().Scan(bucketDynamicConfig, "", func(key string, v []byte) bool {
		var value string
		_, ok := dynamicKeys[key]
		if err := json.Unmarshal(v, &value); err != nil || !ok {
			b.log.Warn("stored dynamic configuration ignored", "key", key)
			return true
		}
		overrides[key] = value
		return true
	})
	if err != nil {
		return fmt.Errorf("dynamic configuration: %w", err)
	}
	if len(overrides) > 0 {
		b.dyn.cur.Store(b.dynamicFrom(overrides))
		b.log.Info("dynamic configuration restored", "overrides", overrides)
	}
	return nil
}

// RuntimeConfiguration returns the configuration in effect under upstream's broker.conf names,
// dynamic overrides applied, as upstream's configuration/runtime answers it. Keys naming
// secrets (token keys, TLS key files) are left out.
func (b *Broker) RuntimeConfiguration() map[string]string {
	c, d := b.cfg, b.dynamic()
	itoa := strconv.Itoa
	btoa := strconv.FormatBool
	return map[string]string{
		"clusterName":                                          c.ClusterName,
		"allowAutoTopicCreation":                               btoa(d.allowAutoTopicCreation),
		"allowAutoTopicCreationType":                           d.allowAutoTopicCreationType,
		"defaultNumPartitions":                                 itoa(d.defaultNumPartitions),
		"allowAutoSubscriptionCreation":                        btoa(d.allowAutoSubscriptionCreation),
		"maxMessageSize":                                       itoa(c.MaxMessageSize),
		"delayedDeliveryEnabled":                               btoa(c.DelayedDeliveryEnabled),
		"delayedDeliveryTickTimeMillis":                        strconv.FormatInt(c.DelayedDeliveryTick.Milliseconds(), 10),
		"keepAliveIntervalSeconds":                             strconv.FormatInt(int64(c.KeepAliveInterval.Seconds()), 10),
		"acknowledgmentAtBatchIndexLevelEnabled":               btoa(c.AcknowledgmentAtBatchIndexLevelEnabled),
		"maxUnackedMessagesPerConsumer":                        itoa(c.MaxUnackedMessagesPerConsumer),
		"brokerDeduplicationEnabled":                           btoa(c.BrokerDeduplicationEnabled),
		"ttlDurationDefaultInSeconds":                          strconv.FormatInt(int64(c.TTLDurationDefault.Seconds()), 10),
		"brokerMaxConnections":                                 itoa(c.BrokerMaxConnections),
		"brokerMaxConnectionsPerIp":                            itoa(c.BrokerMaxConnectionsPerIP),
		"maxProducersPerTopic":                                 itoa(c.MaxProducersPerTopic),
		"maxConsumersPerTopic":                                 itoa(c.MaxConsumersPerTopic),
		"maxConsumersPerSubscription":                          itoa(c.MaxConsumersPerSubscription),
		"maxSubscriptionsPerTopic":                             itoa(c.MaxSubscriptionsPerTopic),
		"backlogQuotaDefaultRetentionPolicy":                   c.BacklogQuotaDefaultRetentionPolicy,
		"maxUnackedMessagesPerSubscription":                    itoa(c.MaxUnackedMessagesPerSubscription),
		"delayedDeliveryMaxDelayInMillis":                      strconv.FormatInt(c.DelayedDeliveryMaxDelay.Milliseconds(), 10),
		"maxPublishRatePerTopicInMessages":                     itoa(c.MaxPublishRatePerTopicInMessages),
		"maxPublishRatePerTopicInBytes":                        strconv.FormatInt(c.MaxPublishRatePerTopicInBytes, 10),
		"dispatchThrottlingRatePerTopicInMsg":                  itoa(c.DispatchThrottlingRatePerTopicInMsg),
		"dispatchThrottlingRatePerTopicInByte":                 strconv.FormatInt(c.DispatchThrottlingRatePerTopicInByte, 10),
		"dispatchThrottlingRatePerSubscriptionInMsg":           itoa(c.DispatchThrottlingRatePerSubscriptionInMsg),
		"dispatchThrottlingRatePerSubscriptionInByte":          strconv.FormatInt(c.DispatchThrottlingRatePerSubscriptionInByte, 10),
		"dispatchThrottlingRateRelativeToPublishRate":          btoa(c.DispatchThrottlingRateRelativeToPublishRate),
		"subscribeThrottlingRatePerConsumer":                   itoa(c.SubscribeThrottlingRatePerConsumer),
		"subscribeRatePeriodPerConsumerInSecond":               itoa(c.SubscribeRatePeriodPerConsumerInSecond),
		"brokerDeduplicationSnapshotIntervalSeconds":           itoa(c.BrokerDeduplicationSnapshotIntervalSeconds),
		"brokerDeduplicationEntriesInterval":                   itoa(c.BrokerDeduplicationEntriesInterval),
		"brokerDeleteInactiveTopicsEnabled":                    btoa(c.BrokerDeleteInactiveTopicsEnabled),
		"brokerDeleteInactiveTopicsMode":                       c.BrokerDeleteInactiveTopicsMode,
		"brokerDeleteInactiveTopicsMaxInactiveDurationSeconds": itoa(c.BrokerDeleteInactiveTopicsMaxInactiveDurationSeconds),
		"isSchemaValidationEnforced":                           btoa(c.IsSchemaValidationEnforced),
		"isAllowAutoUpdateSchemaEnabled":                       btoa(c.IsAllowAutoUpdateSchemaEnabled),
		"subscriptionTypesEnabled":                             strings.Join(c.SubscriptionTypesEnabled, ","),
		"dispatcherPauseOnAckStatePersistentEnabled":           btoa(c.DispatcherPauseOnAckStatePersistentEnabled),
		"authenticationEnabled":                                btoa(c.AuthenticationEnabled),
		"authorizationEnabled":                                 btoa(c.AuthorizationEnabled),
		"superUserRoles":                                       strings.Join(c.SuperUserRoles, ","),
	}
}
