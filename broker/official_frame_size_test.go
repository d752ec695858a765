package broker_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/letterbox-dev/letterbox/broker"
)

// frameTestMaxMessageSize is a small maxMessageSize, so that the tests send little.
const frameTestMaxMessageSize = 64 << 10

// The official Go client cuts a chunked message into chunks of maxMessageSize less its
// metadata without the chunk fields, so every chunk's SEND is a few dozen bytes over
// maxMessageSize: the broker accepts them (frame padding) and the consumer gets the message
// whole.
func TestOfficialFrameSizeChunksAtMaxMessageSize(t *testing.T) {
	t.Parallel()
	b := startBroker(t, func(cfg *broker.Config) { cfg.MaxMessageSize = frameTestMaxMessageSize })
	c := newClient(t, b)
	topic := topicName(t)
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, DisableBatching: true, EnableChunking: true})

	payload := make([]byte, 5*frameTestMaxMessageSize+123)
	for i := range payload {
		payload[i] = byte(i * 7)
	}
	ctx := testCtx(t, 20*time.Second)
	if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: payload, Key: "k"}); err != nil {
		t.Fatalf("send a chunked message of %d bytes with maxMessageSize %d: %v", len(payload), frameTestMaxMessageSize, err)
	}
	m := receiveOne(t, cons, 10*time.Second)
	if !bytes.Equal(m.Payload(), payload) {
		t.Fatalf("received %d bytes, want the %d sent, unchanged", len(m.Payload()), len(payload))
	}
	st, err := b.TopicStats(topic, broker.StatsOptions{})
	if err != nil {
		t.Fatalf("topic stats: %v", err)
	}
	if st.MsgInCounter < 6 {
		t.Fatalf("the topic took %d messages; want one per chunk, at least 6: the message was not chunked", st.MsgInCounter)
	}
}
