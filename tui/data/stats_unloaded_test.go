package data

import (
	"context"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// startDurable starts a durable broker on dir with its admin API (internal/brokertest) and an
// Admin source on both; stop closes all three (the broker as a restart would: the data stays).
func startDurable(t *testing.T, dir string) (b *broker.Broker, a *Admin, stop func()) {
	t.Helper()
	env := brokertest.StartDurable(t, dir)
	a, err := NewAdmin(AdminOptions{AdminURL: env.AdminURL, ServiceURL: env.ServiceURL})
	if err != nil {
		t.Fatal(err)
	}
	return env.Broker, a, func() { a.Close(); env.Stop() }
}

// After a restart the durable broker has loaded no topic (topics load on first use, as
// upstream's), so its broker-wide stats list none of them; the topics screen still shows each
// stored topic's backlog, asked of the topic itself.
func TestTopicsStatsOfTopicsNotLoaded(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	topics := []string{"persistent://public/default/stored-a", "persistent://public/default/stored-b-DLQ"}

	b, _, stop := startDurable(t, dir)
	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: "pulsar://" + b.Addr(), Logger: plog.DefaultNopLogger()})
	if err != nil {
		stop()
		t.Fatal(err)
	}
	for i, topic := range topics {
		cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "keep"})
		if err != nil {
			t.Fatal(err)
		}
		p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 + i {
			if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("x")}); err != nil {
				t.Fatal(err)
			}
		}
		p.Close()
		cons.Close()
	}
	c.Close()
	stop()

	_, a, stop := startDurable(t, dir)
	defer stop()
	rows, err := a.Topics(ctx, "public/default")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]TopicRow{}
	for _, r := range rows {
		got[r.Name] = r
	}
	for i, topic := range topics {
		r, ok := got[topic]
		if !ok {
			t.Fatalf("%s not listed after the restart: %+v", topic, rows)
		}
		if !r.StatsKnown || r.Backlog != int64(3+i) {
			t.Errorf("%s after the restart: stats known %v, backlog %d; want known, %d", topic, r.StatsKnown, r.Backlog, 3+i)
		}
	}
}
