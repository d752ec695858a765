package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire"
)

// keyHashRangesOf reads each consumer's keyHashRangeArrays of subscription sub from the topic
// stats' JSON, as an admin client reads them, by consumer name.
func keyHashRangesOf(t *testing.T, b *broker.Broker, topic, sub string) map[string][][2]int {
	t.Helper()
	st, err := b.TopicStats(topic, broker.StatsOptions{})
	if err != nil {
		t.Fatalf("topic stats: %v", err)
	}
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Subscriptions map[string]struct {
			Consumers []struct {
				ConsumerName       string   `json:"consumerName"`
				KeyHashRangeArrays [][2]int `json:"keyHashRangeArrays"`
			} `json:"consumers"`
		} `json:"subscriptions"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string][][2]int{}
	for _, c := range doc.Subscriptions[sub].Consumers {
		out[c.ConsumerName] = c.KeyHashRangeArrays
	}
	return out
}

// With subscriptionKeySharedUseConsistentHashing=false in broker.conf (upstream's client-test
// configuration),
// Key_Shared AUTO_SPLIT consumers split the hash range as upstream's auto-split selector does:
// each newcomer takes the lower half of the largest range, and one that leaves hands its range
// to the consumer above it. Consumer stats report the ranges (keyHashRangeArrays), and every
// key goes to the consumer whose range holds its hash.
func TestOfficialKeySharedAutoSplitRanges(t *testing.T) {
	t.Parallel()
	const keys = 200
	conf := filepath.Join(t.TempDir(), "broker.conf")
	if err := os.WriteFile(conf, []byte("subscriptionKeySharedUseConsistentHashing=false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b := startBroker(t, func(cfg *broker.Config) {
		loaded, err := broker.LoadConf(conf, *cfg)
		if err != nil {
			t.Fatal(err)
		}
		*cfg = loaded
	})
	c := newClient(t, b)
	topic := topicName(t)
	var cs []pulsar.Consumer
	for _, name := range []string{"c1", "c2", "c3"} {
		cs = append(cs, subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Type: pulsar.KeyShared, Name: name}))
	}
	want := map[string][][2]int{"c1": {{32769, 65536}}, "c2": {{16385, 32768}}, "c3": {{0, 16384}}}
	if got := keyHashRangesOf(t, b, topic, "s"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("key hash ranges %v, want %v", got, want)
	}

	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	var msgs []*pulsar.ProducerMessage
	for k := range keys {
		msgs = append(msgs, &pulsar.ProducerMessage{Key: fmt.Sprintf("key-%d", k), Payload: []byte("x")})
	}
	sendAll(t, p, msgs, 20*time.Second)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	ch, wait := collect(ctx, cs...)
	for range keys {
		select {
		case tm := <-ch:
			slot := int(wire.KeySharedHash([]byte(tm.m.Key())))
			owner := slices.IndexFunc([]string{"c1", "c2", "c3"}, func(name string) bool {
				r := want[name][0]
				return slot >= r[0] && slot <= r[1]
			})
			if owner != tm.who {
				cancel()
				wait()
				t.Fatalf("key %q (hash %d) went to c%d, want c%d", tm.m.Key(), slot, tm.who+1, owner+1)
			}
			cs[tm.who].Ack(tm.m)
		case <-ctx.Done():
			wait()
			t.Fatal("not every message arrived")
		}
	}
	cancel()
	wait()

	cs[1].Close()
	want = map[string][][2]int{"c1": {{16385, 65536}}, "c3": {{0, 16384}}}
	waitFor(t, 10*time.Second, func() bool { return fmt.Sprint(keyHashRangesOf(t, b, topic, "s")) == fmt.Sprint(want) })
}
