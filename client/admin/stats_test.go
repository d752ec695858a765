package admin_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

func TestPartitionedStats(t *testing.T) {
	t.Parallel()
	b, c := start(t)
	x := ctx(t)
	const topic = "persistent://public/default/parted-stats"
	must(t, c.CreateTopic(x, topic, 2, nil))
	produce(t, b, topic+"-partition-0", "a", "b")
	produce(t, b, topic+"-partition-1", "c")
	per, err := c.PartitionedStats(x, topic, true)
	must(t, err)
	if per.Metadata.Partitions != 2 || per.MsgInCounter != 3 || len(per.Partitions) != 2 ||
		per.Partitions[topic+"-partition-0"].MsgInCounter != 2 {
		t.Errorf("per partition = %+v", per)
	}
	agg, err := c.PartitionedStats(x, topic, false)
	must(t, err)
	if agg.Metadata.Partitions != 2 || len(agg.Partitions) != 0 {
		t.Errorf("aggregate only = %+v", agg)
	}
	_, err = c.PartitionedStats(x, missingTopic, true)
	wantStatus(t, "missing topic", err, http.StatusNotFound)
}

// The backlog in messages and the batch indexes acknowledged are read when the broker gives
// them (letterbox's extensions) and nil, not 0 or empty, when it does not (--compat upstream).
func TestBacklogMessagesAreOptional(t *testing.T) {
	t.Parallel()
	for _, compat := range []bool{false, true} {
		env := brokertest.Start(t, func(c *broker.Config) { c.CompatUpstream = compat })
		c, err := admin.New(admin.Options{URL: env.AdminURL, Timeout: 10 * time.Second})
		must(t, err)
		x := ctx(t)
		const topic = "persistent://public/default/batched"
		must(t, c.CreateTopic(x, topic, 0, nil))
		must(t, c.CreateSubscription(x, topic, "s", adminapi.Earliest))
		pc, err := pulsar.NewClient(pulsar.ClientOptions{URL: env.Broker.ServiceURL(), Logger: plog.DefaultNopLogger()})
		must(t, err)
		p, err := pc.CreateProducer(pulsar.ProducerOptions{Topic: topic, BatchingMaxMessages: 50, BatchingMaxPublishDelay: time.Second})
		must(t, err)
		for i := range 250 {
			p.SendAsync(x, &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "m%d", i)}, nil)
		}
		must(t, p.FlushWithCtx(x))
		p.Close()
		pc.Close()
		st, err := c.Stats(x, topic)
		must(t, err)
		ss := st.Subscriptions["s"]
		is, err := c.InternalStats(x, topic)
		must(t, err)
		cur := is.Cursors["s"]
		switch {
		case ss.MsgBacklog != 5:
			t.Errorf("compat %v: msgBacklog %d entries, want 5", compat, ss.MsgBacklog)
		case compat && (ss.MsgBacklogMessages != nil || cur.BatchDeletedIndexes != nil):
			t.Errorf("compat: msgBacklogMessages %v, batchDeletedIndexes %v: want both absent", ss.MsgBacklogMessages, cur.BatchDeletedIndexes)
		case !compat && (ss.MsgBacklogMessages == nil || *ss.MsgBacklogMessages != 250):
			t.Errorf("msgBacklogMessages %v, want 250", ss.MsgBacklogMessages)
		case !compat && (cur.BatchDeletedIndexes == nil || len(*cur.BatchDeletedIndexes) != 0):
			t.Errorf("batchDeletedIndexes %v, want {}", cur.BatchDeletedIndexes)
		}
	}
}
