package broker

import (
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Inactive topic policies: a topic nobody has used for maxInactiveDurationSeconds is deleted by
// the policy's mode (no subscriptions, or subscriptions caught up), not while it has a client or
// its retention time keeps it, and not at all without the policy (letterbox's broker default is
// off). The check runs with the broker's clock moved forward instead of waiting minutes.
func TestInactiveTopicPolicies(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	t0 := time.Unix(1_800_000_000, 0)
	b, err := New(WithLogger(quiet), func(c *Config) {
		c.Clock = func() time.Time { return t0 }
		c.InactiveTopicsCheckInterval = time.Hour // the test runs the checks itself
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const ns = "public/inactive"
	if err := b.CreateNamespace(ns, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.UpdateNamespacePolicies(ns, func(p *adminapi.Policies) error {
		p.InactiveTopicPolicies = &adminapi.InactiveTopicPolicies{InactiveTopicDeleteMode: policy.DeleteWhenNoSubscriptions,
			MaxInactiveDurationSeconds: 60, DeleteWhileInactive: true}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: b.ServiceURL(), Logger: plog.NewLoggerWithSlog(quiet)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	topic := func(name string) string { return "persistent://" + ns + "/" + name }
	produce := func(name string) {
		p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic(name)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Send(t.Context(), &pulsar.ProducerMessage{Payload: []byte("m")}); err != nil {
			t.Fatal(err)
		}
		p.Close()
	}
	subscribe := func(name, sub string) pulsar.Consumer {
		cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic(name), SubscriptionName: sub,
			SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest, AckWithResponse: true})
		if err != nil {
			t.Fatal(err)
		}
		return cons
	}
	// readAll subscribes to name, acknowledges its one message and leaves.
	readAll := func(name string) {
		cons := subscribe(name, "s")
		defer cons.Close()
		m, err := cons.Receive(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if err := cons.Ack(m); err != nil {
			t.Fatal(err)
		}
	}

	produce("unused")     // no subscription: deleted
	produce("subscribed") // a subscription, caught up: kept
	readAll("subscribed")
	busy := subscribe("busy", "s") // a consumer: kept
	defer busy.Close()
	produce("retained") // its retention time keeps it
	if err := b.UpdateTopicPolicies(topic("retained"), func(tp *adminapi.TopicPolicies) error {
		tp.RetentionPolicies = &adminapi.RetentionPolicies{RetentionTimeInMinutes: 5, RetentionSizeInMB: -1}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// delete_when_subscriptions_caught_up (a topic policy over the namespace's): the topic
	// whose subscription has read everything goes, the one whose subscription has not stays.
	caughtUp := &adminapi.InactiveTopicPolicies{InactiveTopicDeleteMode: policy.DeleteWhenSubscriptionsCaughtUp,
		MaxInactiveDurationSeconds: 60, DeleteWhileInactive: true}
	for _, name := range []string{"caught-up", "behind"} {
		produce(name)
		if err := b.UpdateTopicPolicies(topic(name), func(tp *adminapi.TopicPolicies) error {
			tp.InactiveTopicPolicies = caughtUp
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	readAll("caught-up")
	subscribe("behind", "s").Close()
	const other = "persistent://public/default/inactive-without-policy"
	if err := b.CreateTopic(other, nil); err != nil {
		t.Fatal(err)
	}

	exists := func(name string) bool {
		list, err := b.Topics(mustTopicName(t, name).NamespaceName(), true)
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(list, name)
	}
	all := []string{topic("unused"), topic("subscribed"), topic("busy"), topic("retained"), topic("caught-up"), topic("behind"), other}
	check := func(when string, gone ...string) {
		t.Helper()
		for _, name := range all {
			if want := !slices.Contains(gone, name); exists(name) != want {
				t.Errorf("%s: %s exists %v, want %v", when, name, !want, want)
			}
		}
	}

	b.deleteInactiveTopics(t0.Add(59 * time.Second))
	check("after 59 s")
	b.deleteInactiveTopics(t0.Add(61 * time.Second))
	gone := []string{topic("unused"), topic("caught-up")}
	check("after 61 s", gone...)
	b.deleteInactiveTopics(t0.Add(6 * time.Minute))
	check("after 6 min", append(gone, topic("retained"))...)
}
