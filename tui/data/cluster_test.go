//go:build clustertest

package data

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/internal/clustertest"
)

// On the three-broker fixture with token authentication, the topics screen's data holds the
// stats of every topic whichever broker owns it, the same on every refresh; each topic's stats
// open whichever broker owns it (the token follows the redirect to the brokers the cluster
// named); a broker whose web service stops leaves its topics with their last stats, marked
// stale and naming it.
func TestAdminStatsAcrossTheCluster(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{TokenAuth: true})
	token := c.Token(t, "admin")
	ctx := brokertest.Ctx(t, 60*time.Second)
	want := produceAcross(t, ctx, c, token)

	a, err := NewAdmin(AdminOptions{AdminURL: c.AdminURL(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	for refresh := range 3 {
		rows, err := a.Topics(ctx, "public/default")
		if err != nil {
			t.Fatal(err)
		}
		if got := inCounters(rows); !sameCounts(got, want) {
			t.Fatalf("refresh %d: counts %v, want %v", refresh, got, want)
		}
		for _, r := range rows {
			if r.StatsStale {
				t.Fatalf("refresh %d: %s stale (%s) with every broker up", refresh, r.Name, r.StaleBroker)
			}
		}
	}
	for i := range c.Members {
		topic := c.TopicOwnedBy("own", i)
		d, err := a.TopicDetail(ctx, topic)
		if err != nil {
			t.Fatalf("stats of %s (broker %d): %v", topic, i, err)
		}
		if d.Stats.InCounter != want[topic] {
			t.Fatalf("stats of %s: %d in, want %d", topic, d.Stats.InCounter, want[topic])
		}
	}

	silent := c.Members[2]
	silent.StopWeb()
	rows, err := a.Topics(ctx, "public/default")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		owned := r.Partitions == 0 && c.OwnerIndex(r.Name) == 2
		if r.Partitions > 0 {
			owned = true // the partitioned topic has partitions on the silent broker
		}
		if r.StatsStale != owned {
			t.Fatalf("%s: stale %v, want %v", r.Name, r.StatsStale, owned)
		}
		if owned && r.StaleBroker != silent.WebURL[len("http://"):] {
			t.Fatalf("%s: stale from %q, want the silent broker %s", r.Name, r.StaleBroker, silent.WebURL)
		}
		if !r.StatsKnown || r.InCounter != want[r.Name] {
			t.Fatalf("%s: known %v, %d in; want its last stats, %d in", r.Name, r.StatsKnown, r.InCounter, want[r.Name])
		}
	}
}

// A role that may not list the brokers (not a superuser) gets no broker-wide stats: the rows
// the screen shows get theirs one by one through the admin URL (RowDetails), redirects
// followed.
func TestAdminStatsWithoutBrokerAccess(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{TokenAuth: true})
	ctx := brokertest.Ctx(t, 60*time.Second)
	want := produceAcross(t, ctx, c, c.Token(t, "admin"))
	if err := c.Broker.GrantNamespacePermission("public/default", "viewer", []string{"consume", "produce"}); err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, m := range c.Members {
		hosts = append(hosts, m.WebURL)
	}
	a, err := NewAdmin(AdminOptions{AdminURL: c.AdminURL(), Token: c.Token(t, "viewer"), TrustedHosts: hosts})
	if err != nil {
		t.Fatal(err)
	}
	for refresh := range 2 {
		rows, err := a.namespaceTopics(ctx, "public/default")
		if err != nil {
			t.Fatal(err)
		}
		a.remember([]string{"public/default"}, rows)
		a.fillStats(ctx, rows)
		var names []string
		for i := range rows {
			if rows[i].StatsKnown {
				t.Fatalf("refresh %d: %s has stats without broker-wide stats", refresh, rows[i].Name)
			}
			names = append(names, rows[i].Name)
		}
		details, err := a.RowDetails(ctx, names)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			d := details[rows[i].Name]
			rows[i].Stats, rows[i].StatsKnown = d.Stats, d.StatsKnown
		}
		if got := inCounters(rows); !sameCounts(got, want) {
			t.Fatalf("refresh %d: counts %v, want %v", refresh, got, want)
		}
	}
}

// produceAcross makes topics owned by each broker (own-N: N+1 messages) and a topic of six
// partitions spread over the three (12 messages), and returns each topic's message count.
func produceAcross(t *testing.T, ctx context.Context, c *clustertest.Cluster, token string) map[string]int64 {
	t.Helper()
	cl, err := client.New(client.Options{ServiceURL: c.ServiceURL(), Token: token, OperationTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	want := map[string]int64{}
	send := func(topic string, n int) {
		p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: topic, DisableBatching: true})
		if err != nil {
			t.Fatalf("producer %s: %v", topic, err)
		}
		defer p.Close()
		for i := range n {
			if _, err := p.Send(ctx, &client.Message{Key: fmt.Sprint(i), Payload: []byte("x")}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range c.Members {
		topic := c.TopicOwnedBy("own", i)
		send(topic, i+1)
		want[topic] = int64(i + 1)
	}
	spread := "persistent://public/default/spread"
	if err := c.Broker.CreatePartitionedTopic(spread, 6, nil); err != nil {
		t.Fatal(err)
	}
	send(spread, 12)
	for p := range 6 {
		st, err := c.Broker.TopicStats(fmt.Sprintf("%s-partition-%d", spread, p), broker.StatsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want[fmt.Sprintf("%s-partition-%d", spread, p)] = st.MsgInCounter
	}
	want[spread] = 12
	return want
}

func inCounters(rows []TopicRow) map[string]int64 {
	out := map[string]int64{}
	for _, r := range rows {
		if r.StatsKnown {
			out[r.Name] = r.InCounter
		}
	}
	return out
}

func sameCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
