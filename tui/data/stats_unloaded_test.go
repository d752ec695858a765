package data

import (
	"context"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/pulsartest"
)

// After a restart the durable broker has loaded no topic (topics load on first use, as
// upstream's), so its broker-wide stats list none of them: the listing comes without their
// stats, and the topics screen asks each stored topic it shows for its own (RowDetails).
func TestTopicsStatsOfTopicsNotLoaded(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	topics := []string{"persistent://public/default/stored-a", "persistent://public/default/stored-b-DLQ"}

	b := pulsartest.Start(t, pulsartest.Dir(dir))
	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: b.ServiceURL(), Logger: plog.DefaultNopLogger()})
	if err != nil {
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
	if err := b.Restart(); err != nil {
		t.Fatal(err)
	}
	a, err := NewAdmin(AdminOptions{AdminURL: b.AdminURL(), ServiceURL: b.ServiceURL()})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rows, err := a.Topics(ctx, "public/default")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rows {
		if r.StatsKnown {
			t.Errorf("%s listed with stats, loaded by nothing", r.Name)
		}
		names = append(names, r.Name)
	}
	got, err := a.RowDetails(ctx, names)
	if err != nil {
		t.Fatal(err)
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
