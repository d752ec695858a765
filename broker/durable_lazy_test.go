package broker_test

import (
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// openTopics lists the topics b has open, from its broker-stats, which (as upstream's) shows
// loaded topics only.
func openTopics(b *broker.Broker) []string {
	var out []string
	for _, bundles := range b.BrokerTopicStats() {
		for _, domains := range bundles {
			for _, topics := range domains {
				for name := range topics {
					out = append(out, name)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// After a restart the broker opens no stored topic until something uses it, yet lists them all;
// a lookup, an admin call, a consumer or a deletion opens the one it names, with its durable
// subscriptions as they were.
func TestDurableTopicsOpenOnFirstUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	looked, admined, consumed, deleted := topicName(t, "looked"), topicName(t, "admined"), topicName(t, "consumed"), topicName(t, "deleted")
	parted := topicName(t, "parted")

	b := startDurable(t, dir)
	c := newClient(t, b)
	for _, topic := range []string{looked, consumed, deleted} {
		subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"}).Close()
		p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
		sendN(t, p, "m", 3)
		p.Close()
	}
	if err := b.CreateTopic(admined, map[string]string{"owner": "a"}); err != nil {
		t.Fatal(err)
	}
	if err := b.CreatePartitionedTopic(parted, 2, nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	b.Close()

	b2 := startDurable(t, dir)
	if got := openTopics(b2); len(got) != 0 {
		t.Fatalf("open after the start: %v", got)
	}
	want := []string{parted + "-partition-0", parted + "-partition-1", admined, consumed, deleted, looked}
	sort.Strings(want)
	listed, err := b2.Topics("public/default", true)
	if err != nil || !slices.Equal(listed, want) {
		t.Fatalf("admin list: %v, %v; want %v", listed, err, want)
	}
	if got, err := b2.PartitionedTopics("public/default", true); err != nil || !slices.Equal(got, []string{parted}) {
		t.Fatalf("partitioned list: %v, %v", got, err)
	}
	raw, _ := connectRaw(t, b2, "lazy-test", 21)
	resp := raw.request(&pb.BaseCommand{Type: pb.BaseCommand_GET_TOPICS_OF_NAMESPACE.Enum(), GetTopicsOfNamespace: &pb.CommandGetTopicsOfNamespace{
		Namespace: proto.String("public/default"), RequestId: proto.Uint64(raw.id()),
	}}, pb.BaseCommand_GET_TOPICS_OF_NAMESPACE_RESPONSE).GetGetTopicsOfNamespaceResponse()
	if got := slices.Sorted(slices.Values(resp.GetTopics())); !slices.Equal(got, want) {
		t.Fatalf("GET_TOPICS_OF_NAMESPACE: %v, want %v", got, want)
	}
	if got := openTopics(b2); len(got) != 0 {
		t.Fatalf("listing opened %v", got)
	}

	// A lookup opens the topic it names, subscription and backlog included.
	lr := raw.request(&pb.BaseCommand{Type: pb.BaseCommand_LOOKUP.Enum(), LookupTopic: &pb.CommandLookupTopic{
		Topic: proto.String(looked), RequestId: proto.Uint64(raw.id()),
	}}, pb.BaseCommand_LOOKUP_RESPONSE).GetLookupTopicResponse()
	if lr.GetResponse() != pb.CommandLookupTopicResponse_Connect {
		t.Fatalf("LOOKUP: %v", lr)
	}
	if got := openTopics(b2); !slices.Equal(got, []string{looked}) {
		t.Fatalf("open after a lookup: %v", got)
	}
	if st, err := b2.TopicStats(looked, broker.StatsOptions{}); err != nil || st.Subscriptions["s"].MsgBacklog != 3 {
		t.Fatalf("stats of the looked-up topic: %+v, %v", st, err)
	}
	// An admin call opens the topic it names, with its properties.
	if props, err := b2.TopicProperties(admined); err != nil || props["owner"] != "a" {
		t.Fatalf("properties: %v, %v", props, err)
	}
	if _, err := b2.TopicStats(admined, broker.StatsOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := openTopics(b2); !slices.Contains(got, admined) || slices.Contains(got, consumed) {
		t.Fatalf("open after admin calls: %v", got)
	}
	// A consumer on a stored topic gets its subscription's backlog.
	c2 := newClient(t, b2)
	cons := subscribe(t, c2, pulsar.ConsumerOptions{Topic: consumed, SubscriptionName: "s"})
	if got := payloads(receiveN(t, cons, 3, 10*time.Second)); !slices.Equal(got, []string{"m0", "m1", "m2"}) {
		t.Fatalf("the stored subscription got %v", got)
	}
	cons.Close()
	// A stored topic nobody opened can be deleted, log and all.
	if err := b2.DeleteTopic(deleted, false); err != nil {
		t.Fatalf("delete a stored topic: %v", err)
	}
	if err := b2.CreateTopic(admined, nil); err == nil {
		t.Error("an existing topic was created again")
	}
	c2.Close()
	b2.Close()

	b3 := startDurable(t, dir)
	listed, err = b3.Topics("public/default", true)
	if err != nil || slices.Contains(listed, deleted) || !slices.Contains(listed, consumed) {
		t.Fatalf("after deleting %s and restarting: %v, %v", deleted, listed, err)
	}
	if err := b3.CreateTopic(consumed, nil); err == nil {
		t.Error("a stored topic nobody opened was created again")
	}
	if err := b3.DeleteNamespace("public/default", true); err != nil {
		t.Fatalf("delete the namespace with stored topics: %v", err)
	}
	if listed, err := b3.Topics("public/default", true); err == nil && len(listed) > 0 {
		t.Fatalf("topics left after deleting the namespace: %v", listed)
	}
}
