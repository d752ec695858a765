package broker

import (
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker/policy"
)

// The limits' broker.conf keys, under upstream's names; 0 is no limit, as upstream.
func TestLoadConfLimitKeys(t *testing.T) {
	t.Parallel()
	path := writeConf(t, `
brokerMaxConnections=100
brokerMaxConnectionsPerIp=10
maxProducersPerTopic=3
maxConsumersPerTopic=4
maxConsumersPerSubscription=2
maxSubscriptionsPerTopic=5
managedLedgerMaxUnackedRangesToPersist=500
maxConcurrentHttpRequests=16
maxHttpServerConnections=0
httpMaxRequestSize=1048576
backlogQuotaDefaultRetentionPolicy=producer_exception
httpReadHeaderTimeoutSeconds=5
httpReadTimeoutSeconds=20
httpWriteTimeoutSeconds=45
httpIdleTimeoutSeconds=90
`)
	base := DefaultConfig()
	base.Logger = slog.New(slog.DiscardHandler)
	got, err := LoadConf(path, base)
	if err != nil {
		t.Fatal(err)
	}
	want := base
	want.BrokerMaxConnections = 100
	want.BrokerMaxConnectionsPerIP = 10
	want.MaxProducersPerTopic = 3
	want.MaxConsumersPerTopic = 4
	want.MaxConsumersPerSubscription = 2
	want.MaxSubscriptionsPerTopic = 5
	want.ManagedLedgerMaxUnackedRangesToPersist = 500
	want.MaxConcurrentHTTPRequests = 16
	want.MaxHTTPServerConnections = 0
	want.HTTPMaxRequestSize = 1 << 20
	want.BacklogQuotaDefaultRetentionPolicy = policy.QuotaProducerException
	want.HTTPReadHeaderTimeout, want.HTTPReadTimeout = 5*time.Second, 20*time.Second
	want.HTTPWriteTimeout, want.HTTPIdleTimeout = 45*time.Second, 90*time.Second
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LoadConf:\n got %+v\nwant %+v", got, want)
	}

	// Upstream's defaults: no limits, 10000 ranges, producers held back.
	d := DefaultConfig()
	if d.BrokerMaxConnections != 0 || d.BrokerMaxConnectionsPerIP != 0 || d.MaxProducersPerTopic != 0 ||
		d.MaxConsumersPerTopic != 0 || d.MaxConsumersPerSubscription != 0 || d.MaxSubscriptionsPerTopic != 0 ||
		d.ManagedLedgerMaxUnackedRangesToPersist != 10000 || d.HTTPMaxRequestSize != -1 ||
		d.MaxConcurrentHTTPRequests != 1024 || d.MaxHTTPServerConnections != 2048 ||
		d.BacklogQuotaDefaultRetentionPolicy != policy.QuotaProducerRequestHold || d.MemoryLimit != 0 ||
		d.HTTPReadHeaderTimeout != 10*time.Second || d.HTTPReadTimeout != 30*time.Second ||
		d.HTTPWriteTimeout != time.Minute || d.HTTPIdleTimeout != 2*time.Minute {
		t.Errorf("defaults %+v", d)
	}

	for _, bad := range []string{
		"maxProducersPerTopic=-1",
		"brokerMaxConnectionsPerIp=many",
		"httpMaxRequestSize=-2",
		"backlogQuotaDefaultRetentionPolicy=drop_everything",
		"httpWriteTimeoutSeconds=0",
		"httpReadTimeoutSeconds=soon",
	} {
		key, _, _ := strings.Cut(bad, "=")
		if _, err := LoadConf(writeConf(t, bad+"\n"), base); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: err %v, want one naming %s", bad, err, key)
		}
	}
}

// A Config with a negative limit or an unknown policy does not start.
func TestConfigLimitsValidated(t *testing.T) {
	t.Parallel()
	for _, edit := range []func(*Config){
		func(c *Config) { c.MaxConsumersPerTopic = -1 },
		func(c *Config) { c.MemoryLimit = -1 },
		func(c *Config) { c.BacklogQuotaDefaultRetentionPolicy = "nope" },
		// A write timeout no longer than the wait for a slot would cut queued requests.
		func(c *Config) { c.HTTPWriteTimeout = c.HTTPReadTimeout },
	} {
		cfg := DefaultConfig()
		edit(&cfg)
		if b, err := New(WithConfig(cfg)); err == nil {
			b.Close()
			t.Errorf("%+v accepted", cfg)
		}
	}
}
