package broker

import (
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// A subscription without consumers for longer than its namespace's
// subscription_expiration_time_minutes is deleted; one with a consumer, or idle for less, is
// kept. The check runs with a clock moved forward instead of waiting minutes.
func TestSubscriptionExpiration(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := New(WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.CreateNamespace("public/exp", nil); err != nil {
		t.Fatal(err)
	}
	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: b.ServiceURL(), Logger: plog.NewLoggerWithSlog(quiet)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const topic = "persistent://public/exp/t"
	idle, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "idle"})
	if err != nil {
		t.Fatal(err)
	}
	idle.Close()
	busy, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "busy"})
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()

	subs := func() []string {
		list, err := b.Subscriptions(topic)
		if err != nil {
			t.Fatal(err)
		}
		return list
	}
	later := time.Now().Add(2 * time.Minute)
	b.expireSubscriptions(later) // no policy: never
	if !slices.Contains(subs(), "idle") {
		t.Fatalf("subscriptions = %v: expired without a policy", subs())
	}
	five := 5
	if err := b.UpdateNamespacePolicies("public/exp", func(p *adminapi.Policies) error {
		p.SubscriptionExpirationTimeMinutes = &five
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	b.expireSubscriptions(later) // idle for 2 of 5 minutes
	if !slices.Contains(subs(), "idle") {
		t.Fatalf("subscriptions = %v: expired before its time", subs())
	}
	b.expireSubscriptions(time.Now().Add(6 * time.Minute))
	if got := subs(); slices.Contains(got, "idle") || !slices.Contains(got, "busy") {
		t.Errorf("subscriptions after expiry = %v, want busy only", got)
	}
}

// The compaction threshold in effect: the topic's policy, else the namespace's, else the
// broker's.
func TestCompactionThresholdLayers(t *testing.T) {
	b, err := New(WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), func(c *Config) { c.BrokerServiceCompactionThreshold = 100 })
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const topic = "persistent://public/default/compacted"
	if err := b.CreateTopic(topic, nil); err != nil {
		t.Fatal(err)
	}
	want := func(n int64) {
		t.Helper()
		if got, err := b.CompactionThreshold(topic); err != nil || got != n {
			t.Errorf("threshold = %d, %v; want %d", got, err, n)
		}
	}
	want(100)
	ns, tp := int64(200), int64(300)
	if err := b.UpdateNamespacePolicies("public/default", func(p *adminapi.Policies) error { p.CompactionThreshold = &ns; return nil }); err != nil {
		t.Fatal(err)
	}
	want(200)
	if err := b.UpdateTopicPolicies(topic, func(p *adminapi.TopicPolicies) error { p.CompactionThreshold = &tp; return nil }); err != nil {
		t.Fatal(err)
	}
	want(300)
}
