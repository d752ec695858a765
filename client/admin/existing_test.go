package admin_test

import (
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// Wrappers older than this file that TestAdminClient does not reach, one test each.

func TestTenantsAndUpdateTenant(t *testing.T) {
	t.Parallel()
	_, _, c := start(t)
	x := ctx(t)
	must(t, c.CreateTenant(x, "acme", admin.TenantInfo{AllowedClusters: []string{"standalone"}}))
	tenants, err := c.Tenants(x)
	must(t, err)
	if !slices.Contains(tenants, "acme") || !slices.Contains(tenants, "public") {
		t.Errorf("tenants = %v", tenants)
	}
	must(t, c.UpdateTenant(x, "acme", admin.TenantInfo{AdminRoles: []string{"ops"}, AllowedClusters: []string{"standalone"}}))
	info, err := c.Tenant(x, "acme")
	must(t, err)
	if !reflect.DeepEqual(info, admin.TenantInfo{AdminRoles: []string{"ops"}, AllowedClusters: []string{"standalone"}}) {
		t.Errorf("tenant = %+v", info)
	}
	_, err = c.Tenant(x, "nobody")
	wantStatus(t, "missing tenant", err, http.StatusNotFound)
	wantStatus(t, "update of a missing tenant", c.UpdateTenant(x, "nobody", info), http.StatusNotFound)
}

func TestNamespaces(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	must(t, c.CreateNamespace(x, "acme/web"))
	nss, err := c.Namespaces(x, "acme")
	must(t, err)
	slices.Sort(nss)
	if !slices.Equal(nss, []string{"acme/app", "acme/web"}) {
		t.Errorf("namespaces = %v", nss)
	}
	_, err = c.Namespaces(x, "nobody")
	wantStatus(t, "missing tenant", err, http.StatusNotFound)
}

func TestUpdatePartitions(t *testing.T) {
	t.Parallel()
	_, _, c := start(t)
	x := ctx(t)
	const topic = "persistent://public/default/grown"
	must(t, c.CreateTopic(x, topic, 2, nil))
	must(t, c.UpdatePartitions(x, topic, 4))
	if n, err := c.Partitions(x, topic); err != nil || n != 4 {
		t.Errorf("partitions = %d, %v; want 4", n, err)
	}
	if err := c.UpdatePartitions(x, topic, 3); admin.StatusOf(err) < 400 {
		t.Errorf("shrinking: %v, want a 4xx", err)
	}
}

func TestUpdateTopicProperties(t *testing.T) {
	t.Parallel()
	_, _, c := start(t)
	x := ctx(t)
	const topic = "persistent://public/default/labelled"
	must(t, c.CreateTopic(x, topic, 0, map[string]string{"owner": "billing"}))
	must(t, c.UpdateTopicProperties(x, topic, map[string]string{"tier": "gold"}))
	props, err := c.TopicProperties(x, topic)
	must(t, err)
	if !reflect.DeepEqual(props, map[string]string{"owner": "billing", "tier": "gold"}) {
		t.Errorf("properties = %v", props)
	}
	wantStatus(t, "missing topic", c.UpdateTopicProperties(x, missingTopic, props), http.StatusNotFound)
}

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

func TestExpireMessages(t *testing.T) {
	t.Parallel()
	b, _, c := start(t)
	x := ctx(t)
	const topic = "persistent://public/default/expire-one"
	must(t, c.CreateTopic(x, topic, 0, nil))
	must(t, c.CreateSubscription(x, topic, "s1", admin.Earliest))
	must(t, c.CreateSubscription(x, topic, "s2", admin.Earliest))
	produce(t, b, topic, "a", "b")
	// "Older than 0 s" may not yet hold within the millisecond of publishing: expire until it does.
	brokertest.WaitFor(t, 10*time.Second, "s1 emptied", func() bool {
		must(t, c.ExpireMessages(x, topic, "s1", 0))
		st, err := c.Stats(x, topic)
		must(t, err)
		return st.Subscriptions["s1"].MsgBacklog == 0
	})
	if st, err := c.Stats(x, topic); err != nil || st.Subscriptions["s2"].MsgBacklog != 2 {
		t.Errorf("the other subscription: %+v, %v; want its backlog of 2 untouched", st.Subscriptions["s2"], err)
	}
	wantStatus(t, "missing subscription", c.ExpireMessages(x, topic, "none", 0), http.StatusNotFound)
}

func TestResetCursorToID(t *testing.T) {
	t.Parallel()
	b, _, c := start(t)
	x := ctx(t)
	const topic = "persistent://public/default/rewound"
	must(t, c.CreateTopic(x, topic, 0, nil))
	must(t, c.CreateSubscription(x, topic, "s", admin.Earliest))
	produce(t, b, topic, "a", "b", "c")
	second, err := c.ExamineMessage(x, topic, false, 2)
	must(t, err)
	must(t, c.ClearBacklog(x, topic, "s"))
	must(t, c.ResetCursorToID(x, topic, "s", second[0].ID))
	msgs, err := c.PeekAt(x, topic, "s", 1)
	must(t, err)
	if len(msgs) != 1 || string(msgs[0].Payload) != "b" {
		t.Errorf("next after reset = %+v, want b", msgs)
	}
	wantStatus(t, "missing subscription", c.ResetCursorToID(x, topic, "none", second[0].ID), http.StatusNotFound)
}

func TestSchemaVersionsAndDelete(t *testing.T) {
	t.Parallel()
	_, _, c := start(t)
	x := ctx(t)
	must(t, c.CreateSchema(x, schemaTopic, "AVRO", avroV1, map[string]string{"team": "orders"}))
	must(t, c.CreateSchema(x, schemaTopic, "AVRO", avroV2, nil))
	v0, err := c.Schema(x, schemaTopic, 0)
	must(t, err)
	if v0.Version != 0 || v0.Type != "AVRO" || v0.Data != avroV1 || v0.Properties["team"] != "orders" {
		t.Errorf("version 0 = %+v", v0)
	}
	all, err := c.Schemas(x, schemaTopic)
	must(t, err)
	if len(all) != 2 || all[1].Data != avroV2 {
		t.Errorf("all versions = %+v", all)
	}
	must(t, c.DeleteSchema(x, schemaTopic))
	_, err = c.Schema(x, schemaTopic, -1)
	wantStatus(t, "schema after deletion", err, http.StatusNotFound)
}
