package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// metricValue reads one sample of /metrics: the line that starts with series.
func metricValue(t *testing.T, url, series string) (float64, error) {
	t.Helper()
	resp, body := do(t, http.MethodGet, url+"/metrics")
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("metrics: %d", resp.StatusCode)
	}
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("no %s in:\n%s", series, body)
}

// /metrics splits what the topics store: what a subscription still needs (backlog) and what
// none does (acknowledged, kept until its ledger goes). Ten equal messages, four acknowledged:
// six tenths backlog, four tenths acknowledged; all acknowledged: all of it acknowledged, held
// by the open ledger.
func TestMetricsStoredAcknowledgedApartFromBacklog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := "persistent://public/default/stored-split"
	c := e.client(t)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{
		Topic: topic, SubscriptionName: "s", SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest,
	})
	must(t, err)
	defer cons.Close()
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	must(t, err)
	defer p.Close()
	const n = 10
	for i := range n {
		_, err := p.Send(context.Background(), &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "message-%02d", i)})
		must(t, err)
	}
	st, err := e.adm.Topics().GetStats(*topicName(t, topic))
	must(t, err)
	size := float64(st.StorageSize)
	split := func(wantAcked, wantBacklog float64) func() error {
		return func() error {
			acked, err := metricValue(t, e.s.URL(), `letterbox_stored_acknowledged_bytes{cluster="standalone"}`)
			if err != nil {
				return err
			}
			backlog, err := metricValue(t, e.s.URL(), `letterbox_stored_backlog_bytes{cluster="standalone"}`)
			if err != nil {
				return err
			}
			if acked != wantAcked || backlog != wantBacklog {
				return fmt.Errorf("acknowledged %v, backlog %v bytes; want %v and %v of %v stored", acked, backlog, wantAcked, wantBacklog, size)
			}
			return nil
		}
	}
	brokertest.WaitForNil(t, 10*time.Second, "nothing acknowledged", split(0, size))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var last pulsar.MessageID
	for i := range n {
		msg, err := cons.Receive(ctx)
		must(t, err)
		if i < 4 {
			must(t, cons.Ack(msg))
		}
		last = msg.ID()
	}
	backlog := float64(st.StorageSize * 6 / n) // as stats estimate it
	brokertest.WaitForNil(t, 10*time.Second, "4 of 10 acknowledged", split(size-backlog, backlog))
	must(t, cons.AckIDCumulative(last))
	brokertest.WaitForNil(t, 10*time.Second, "all acknowledged", split(size, 0))
}
