package broker_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// With deduplication on, PRODUCER_SUCCESS reports the highest sequence id accepted for writing,
// as upstream's getLastPublishedSequenceId does, not the highest already stored: a producer that
// comes back under the same name while its predecessor's last write is still being synced
// numbers its first message after that write. Reporting the stored mark made the official
// client reuse the pending write's sequence id, and its message was dropped as a duplicate.
func TestDedupProducerSuccessReportsPushed(t *testing.T) {
	t.Parallel()
	fault := &storage.FaultFS{}
	b := startStore(t, t.TempDir(), storage.FileStoreOptions{FS: fault},
		func(c *broker.Config) { c.BrokerDeduplicationEnabled = true })
	topic := topicName(t)
	c := newClient(t, b)
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})

	// The predecessor: a raw connection, so that it can vanish without the official client's
	// reconnecting and resending.
	raw, _ := connectRaw(t, b, "raw-test", 21)
	producerID := raw.id()
	name := raw.createProducer(topic, producerID)
	raw.sendPayload(rawSendCommand(producerID, 0), rawMetadata(name, 0), []byte("m0"))
	raw.expect(pb.BaseCommand_SEND_RECEIPT)

	// Hold the next segment sync: sequence id 1 is accepted but not yet stored.
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var releaseOnce sync.Once
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	fault.BeforeSync(func(file string) {
		if strings.HasSuffix(file, ".seg") {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release
		}
	})
	raw.sendPayload(rawSendCommand(producerID, 1), rawMetadata(name, 1), []byte("m1"))
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the write of sequence id 1 did not reach its sync")
	}
	raw.nc.Close()

	// The successor, under the same name, once the broker has let the predecessor go.
	var p pulsar.Producer
	waitFor(t, 10*time.Second, func() bool {
		var err error
		p, err = c.CreateProducer(pulsar.ProducerOptions{Topic: topic, Name: name, DisableBatching: true})
		return err == nil
	})
	defer p.Close()
	done := make(chan error, 1)
	p.SendAsync(testCtx(t, 10*time.Second), &pulsar.ProducerMessage{Payload: []byte("new")},
		func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) { done <- err })
	fault.BeforeSync(nil)
	unblock()
	if err := <-done; err != nil {
		t.Fatalf("send: %v", err)
	}
	if got := p.LastSequenceID(); got != 2 {
		t.Errorf("the successor's first message has sequence id %d, want 2 (after the accepted 1)", got)
	}
	if got := payloads(receiveN(t, cons, 3, 10*time.Second)); strings.Join(got, ",") != "m0,m1,new" {
		t.Errorf("received %v, want [m0 m1 new]", got)
	}
}
