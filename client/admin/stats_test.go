package admin_test

import (
	"net/http"
	"testing"
)

func TestPartitionedStats(t *testing.T) {
	t.Parallel()
	b, _, c := start(t)
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
