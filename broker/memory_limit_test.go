package broker_test

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// quotaWatch counts what the broker tells producers about the backlog quota.
type quotaWatch struct {
	closed, refused atomic.Int64
	code            atomic.Int32
}

func (w *quotaWatch) intercept(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
	if dir != broker.Outbound {
		return broker.Verdict{}
	}
	switch {
	case cmd.GetCloseProducer() != nil:
		w.closed.Add(1)
	case cmd.GetError().GetError() == pb.ServerError_ProducerBlockedQuotaExceededError,
		cmd.GetError().GetError() == pb.ServerError_ProducerBlockedQuotaExceededException:
		w.refused.Add(1)
		w.code.Store(int32(cmd.GetError().GetError()))
	}
	return broker.Verdict{}
}

// feed sends n messages of size bytes with SendAsync and returns how many were receipted and
// the errors of the others.
func feed(t *testing.T, p pulsar.Producer, n, size int) (ok int64, errs []error) {
	t.Helper()
	payload := make([]byte, size)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var okN atomic.Int64
	ctx := testCtx(t, 5*time.Minute)
	for range n {
		wg.Add(1)
		p.SendAsync(ctx, &pulsar.ProducerMessage{Payload: payload}, func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) {
			defer wg.Done()
			if err == nil {
				okN.Add(1)
				return
			}
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		})
	}
	wg.Wait()
	return okN.Load(), errs
}

// An in-memory broker with a 256 MiB budget, fed 1 GiB by an official producer whose consumer
// never reads, keeps its heap under 320 MiB: past the budget the producer is disconnected and
// refused with ProducerBlockedQuotaExceededError (producer_request_hold, upstream's default),
// so its sends wait and time out in the client instead of growing the broker. Once the
// consumer reads and acknowledges, producers are accepted again. Not parallel: it measures
// the process's heap, in which the broker runs.
func TestMemoryLimitHoldsProducers(t *testing.T) {
	const (
		limit = 256 << 20
		size  = 1 << 20
		total = 1 << 30
	)
	w := &quotaWatch{}
	b := startBroker(t, func(c *broker.Config) { c.MemoryLimit = limit })
	intercept(t, b, w.intercept)
	c := newClient(t, b)
	topic := topicName(t)
	cons := subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "never-reads", ReceiverQueueSize: 1})
	// Few pending sends, soon timed out: the client holds little of the gigabyte at a time, and
	// the sends the hold keeps waiting fail quickly, so that the whole gigabyte is offered.
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, MaxPendingMessages: 8,
		SendTimeout: 100 * time.Millisecond})

	ok, errs := feed(t, p, total/size, size)
	heap := liveHeap()
	inUse, _ := b.MemoryBudget()
	t.Logf("fed %d MiB: %d messages receipted (%d MiB), %d failed; broker holds %d MiB; live heap %d MiB; %d CLOSE_PRODUCER, %d refusals",
		total>>20, ok, ok*size>>20, len(errs), inUse>>20, heap>>20, w.closed.Load(), w.refused.Load())
	if heap >= 320<<20 {
		t.Fatalf("live heap %d MiB with a budget of %d MiB, want under 320 MiB", heap>>20, limit>>20)
	}
	if ok*size > limit+8<<20 || len(errs) == 0 {
		t.Fatalf("%d messages receipted (%d MiB) and %d failed, want the budget to stop the producer", ok, ok*size>>20, len(errs))
	}
	if w.closed.Load() == 0 || w.refused.Load() == 0 || pb.ServerError(w.code.Load()) != pb.ServerError_ProducerBlockedQuotaExceededError {
		t.Fatalf("%d CLOSE_PRODUCER and %d refusals (last %v), want producers closed and refused with ProducerBlockedQuotaExceededError",
			w.closed.Load(), w.refused.Load(), pb.ServerError(w.code.Load()))
	}
	if _, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic}); err == nil ||
		!strings.Contains(err.Error(), "ProducerBlockedQuotaExceededError") {
		t.Fatalf("a new producer over the budget: %v, want ProducerBlockedQuotaExceededError", err)
	}

	// The consumer catches up: memory goes back and producers are accepted again.
	ctx := testCtx(t, 2*time.Minute)
	for range ok {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatalf("receive: %v", err)
		}
		cons.Ack(m)
	}
	waitFor(t, 30*time.Second, func() bool {
		inUse, _ := b.MemoryBudget()
		return inUse < limit/2
	})
	again := createProducer(t, c, pulsar.ProducerOptions{Topic: topic})
	sendN(t, again, "after", 1)
}

// producer_exception: past the budget, the producer's pending sends fail with
// ErrProducerBlockedQuotaExceeded, and a new producer is refused with
// ProducerBlockedQuotaExceededException.
func TestMemoryLimitProducerException(t *testing.T) {
	t.Parallel()
	const limit = 8 << 20
	w := &quotaWatch{}
	b := startBroker(t, func(c *broker.Config) {
		c.MemoryLimit = limit
		c.BacklogQuotaDefaultRetentionPolicy = policy.QuotaProducerException
	})
	intercept(t, b, w.intercept)
	c := newClient(t, b)
	topic := topicName(t)
	subscribe(t, c, pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "never-reads", ReceiverQueueSize: 1})
	p := createProducer(t, c, pulsar.ProducerOptions{Topic: topic, MaxPendingMessages: 8})
	ok, errs := feed(t, p, 32, 1<<20)
	quota := 0
	for _, err := range errs {
		if errors.Is(err, pulsar.ErrProducerBlockedQuotaExceeded) {
			quota++
		}
	}
	t.Logf("%d receipted, %d failed, %d of them with ErrProducerBlockedQuotaExceeded", ok, len(errs), quota)
	if quota == 0 {
		t.Fatalf("no send failed with ErrProducerBlockedQuotaExceeded: %v", errs)
	}
	if pb.ServerError(w.code.Load()) != pb.ServerError_ProducerBlockedQuotaExceededException {
		t.Fatalf("refusals with %v, want ProducerBlockedQuotaExceededException", pb.ServerError(w.code.Load()))
	}
	if _, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic}); err == nil ||
		!strings.Contains(err.Error(), "ProducerBlockedQuotaExceededException") {
		t.Fatalf("a new producer over the budget: %v, want ProducerBlockedQuotaExceededException", err)
	}
	// Non-persistent topics keep nothing, and are never held back.
	np := createProducer(t, c, pulsar.ProducerOptions{Topic: "non-persistent://public/default/" + localName(t)})
	sendN(t, np, "np", 1)
}
