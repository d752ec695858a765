package web_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/admin"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/admin/config"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/rest"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/web"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// The official pulsaradmin (and the official client, to make traffic) against a real broker
// and web server: the oracle for path, JSON and status compatibility.

type env struct {
	b   *broker.Broker
	s   *web.Server
	adm admin.Client
}

func newEnv(t *testing.T, opts ...broker.Option) *env {
	t.Helper()
	b, s := startServer(t, opts...)
	adm, err := admin.New(&config.Config{WebServiceURL: s.URL(), PulsarAPIVersion: config.V2})
	if err != nil {
		t.Fatal(err)
	}
	return &env{b: b, s: s, adm: adm}
}

func (e *env) client(t *testing.T) pulsar.Client {
	t.Helper()
	c, err := pulsar.NewClient(pulsar.ClientOptions{
		URL:              e.b.ServiceURL(),
		OperationTimeout: 10 * time.Second,
		Logger:           plog.NewLoggerWithSlog(quiet),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func status(err error) int {
	if e, ok := err.(rest.Error); ok {
		return e.Code
	}
	return 0
}

func wantStatus(t *testing.T, what string, err error, code int) {
	t.Helper()
	if status(err) != code {
		t.Errorf("%s: %v, want HTTP %d", what, err, code)
	}
}

func topicName(t *testing.T, s string) *utils.TopicName {
	t.Helper()
	tn, err := utils.GetTopicName(s)
	must(t, err)
	return tn
}

func TestPulsarAdminTenantsAndNamespaces(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clusters, err := e.adm.Clusters().List()
	must(t, err)
	if !slices.Equal(clusters, []string{"standalone"}) {
		t.Errorf("clusters = %v", clusters)
	}
	tenants := e.adm.Tenants()
	must(t, tenants.Create(utils.TenantData{Name: "acme", AllowedClusters: []string{"standalone"}, AdminRoles: []string{"ops"}}))
	wantStatus(t, "create twice", tenants.Create(utils.TenantData{Name: "acme", AllowedClusters: []string{"standalone"}}), 409)
	wantStatus(t, "unknown cluster", tenants.Create(utils.TenantData{Name: "x", AllowedClusters: []string{"nope"}}), 412)
	wantStatus(t, "bad name", tenants.Create(utils.TenantData{Name: "a b", AllowedClusters: []string{"standalone"}}), 412)
	list, err := tenants.List()
	must(t, err)
	if !slices.Equal(list, []string{"acme", "public"}) {
		t.Errorf("tenants = %v", list)
	}
	must(t, tenants.Update(utils.TenantData{Name: "acme", AllowedClusters: []string{"standalone"}, AdminRoles: []string{"ops", "dev"}}))
	td, err := tenants.Get("acme")
	must(t, err)
	if !slices.Equal(td.AdminRoles, []string{"ops", "dev"}) || !slices.Equal(td.AllowedClusters, []string{"standalone"}) {
		t.Errorf("tenant = %+v", td)
	}
	_, err = tenants.Get("nope")
	wantStatus(t, "get missing tenant", err, 404)

	ns := e.adm.Namespaces()
	must(t, ns.CreateNamespace("acme/orders"))
	wantStatus(t, "namespace twice", ns.CreateNamespace("acme/orders"), 409)
	wantStatus(t, "namespace of missing tenant", ns.CreateNamespace("nope/orders"), 404)
	must(t, ns.CreateNsWithNumBundles("acme/billing", 4))
	names, err := ns.GetNamespaces("acme")
	must(t, err)
	if !slices.Equal(names, []string{"acme/billing", "acme/orders"}) {
		t.Errorf("namespaces = %v", names)
	}
	pol, err := ns.GetPolicies("acme/orders")
	must(t, err)
	if pol.Bundles == nil || pol.Bundles.NumBundles != 1 {
		t.Errorf("policies = %+v", pol)
	}

	must(t, ns.SetRetention("acme/orders", utils.NewRetentionPolicies(60, 100)))
	ret, err := ns.GetRetention("acme/orders")
	must(t, err)
	if ret == nil || ret.RetentionTimeInMinutes != 60 || ret.RetentionSizeInMB != 100 {
		t.Errorf("retention = %+v", ret)
	}
	nsn, _ := utils.GetNamespaceName("acme/orders")
	two := 2
	must(t, ns.SetTopicAutoCreation(*nsn, utils.TopicAutoCreationConfig{Allow: true, Type: utils.Partitioned, Partitions: &two}))
	must(t, ns.SetSchemaCompatibilityStrategy(*nsn, utils.SchemaCompatibilityStrategyBackward))
	strategy, err := ns.GetSchemaCompatibilityStrategy(*nsn)
	must(t, err)
	if strategy != utils.SchemaCompatibilityStrategyBackward {
		t.Errorf("strategy = %v", strategy)
	}
	must(t, ns.SetDeduplicationStatus("acme/orders", true))
	must(t, ns.GrantNamespacePermission(*nsn, "app", []utils.AuthAction{"produce", "consume"}))
	perms, err := ns.GetNamespacePermissions(*nsn)
	must(t, err)
	if len(perms["app"]) != 2 {
		t.Errorf("permissions = %v", perms)
	}
	pol, err = ns.GetPolicies("acme/orders")
	must(t, err)
	if pol.DeduplicationEnabled == nil || !*pol.DeduplicationEnabled || pol.TopicAutoCreationConfig == nil ||
		*pol.TopicAutoCreationConfig.Partitions != 2 || pol.SchemaCompatibilityStrategy != "BACKWARD" {
		t.Errorf("policies after updates = %+v", pol)
	}

	// The override is enforced: a producer auto-creates a partitioned topic with 2 partitions.
	c := e.client(t)
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: "persistent://acme/orders/auto"})
	must(t, err)
	p.Close()
	meta, err := e.adm.Topics().GetMetadata(*topicName(t, "persistent://acme/orders/auto"))
	must(t, err)
	if meta.Partitions != 2 {
		t.Errorf("auto-created partitions = %d, want 2 (namespace override)", meta.Partitions)
	}

	wantStatus(t, "delete non-empty namespace", ns.DeleteNamespace("acme/orders"), 409)
	wantStatus(t, "delete tenant with namespaces", tenants.Delete("acme"), 409)
	must(t, e.adm.Topics().Delete(*topicName(t, "persistent://acme/orders/auto"), true, false))
	must(t, ns.DeleteNamespace("acme/orders"))
	must(t, ns.DeleteNamespace("acme/billing"))
	must(t, tenants.Delete("acme"))
	wantStatus(t, "delete missing namespace", ns.DeleteNamespace("acme/orders"), 404)
}

func TestPulsarAdminTopics(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topics := e.adm.Topics()
	plain := *topicName(t, "persistent://public/default/plain")
	withProps := *topicName(t, "persistent://public/default/props")
	parted := *topicName(t, "persistent://public/default/parted")
	must(t, topics.Create(plain, 0)) // body: null
	must(t, topics.CreateWithProperties(withProps, 0, map[string]string{"owner": "ops"}))
	must(t, topics.CreateWithProperties(parted, 3, map[string]string{"team": "a"}))
	wantStatus(t, "create twice", topics.Create(plain, 0), 409)
	wantStatus(t, "partitioned twice", topics.Create(parted, 2), 409)
	wantStatus(t, "zero partitions", topics.Create(*topicName(t, "persistent://public/default/zero"), -1), 406)
	wantStatus(t, "missing namespace", topics.Create(*topicName(t, "persistent://public/nope/x"), 0), 404)

	partitioned, nonPartitioned, err := topics.List(*mustNS(t, "public/default"))
	must(t, err)
	if !slices.Equal(partitioned, []string{"persistent://public/default/parted"}) {
		t.Errorf("partitioned = %v", partitioned)
	}
	want := []string{"persistent://public/default/parted-partition-0", "persistent://public/default/parted-partition-1",
		"persistent://public/default/parted-partition-2", "persistent://public/default/plain", "persistent://public/default/props"}
	slices.Sort(nonPartitioned)
	if !slices.Equal(nonPartitioned, want) {
		t.Errorf("non-partitioned = %v", nonPartitioned)
	}
	meta, err := topics.GetMetadata(parted)
	must(t, err)
	if meta.Partitions != 3 {
		t.Errorf("partitions = %d", meta.Partitions)
	}
	must(t, topics.Update(parted, 4))
	wantStatus(t, "shrink", topics.Update(parted, 2), 422)
	if meta, _ = topics.GetMetadata(parted); meta.Partitions != 4 {
		t.Errorf("partitions after update = %d", meta.Partitions)
	}
	props, err := topics.GetProperties(withProps)
	must(t, err)
	if props["owner"] != "ops" {
		t.Errorf("properties = %v", props)
	}
	must(t, topics.UpdateProperties(withProps, map[string]string{"tier": "gold"}))
	must(t, topics.RemoveProperty(withProps, "owner"))
	if props, _ = topics.GetProperties(withProps); len(props) != 1 || props["tier"] != "gold" {
		t.Errorf("properties after edits = %v", props)
	}
	if props, _ = topics.GetProperties(parted); props["team"] != "a" {
		t.Errorf("partitioned properties = %v", props)
	}

	// Traffic, then lastMessageId, terminate and delete.
	c := e.client(t)
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: plain.String(), DisableBatching: true})
	must(t, err)
	var last pulsar.MessageID
	for i := range 3 {
		last, err = p.Send(context.Background(), &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "m%d", i)})
		must(t, err)
	}
	id, err := topics.GetLastMessageID(plain)
	must(t, err)
	if id.LedgerID != last.LedgerID() || id.EntryID != last.EntryID() {
		t.Errorf("last message id = %+v, producer's last = %v", id, last)
	}
	wantStatus(t, "delete with a producer", topics.Delete(plain, false, true), 412)
	tid, err := topics.Terminate(plain)
	must(t, err)
	if tid.EntryID != last.EntryID() {
		t.Errorf("terminate = %+v", tid)
	}
	// Terminating closed the producer (as upstream); a new one is refused. (No send on the old
	// one: the official client, refused on its reconnect, closes the channel a send writes to
	// without holding off concurrent sends — a panic under the race detector's scheduling.)
	if late, err := c.CreateProducer(pulsar.ProducerOptions{Topic: plain.String()}); err == nil || !strings.Contains(err.Error(), "TopicTerminatedError") {
		if late != nil {
			late.Close()
		}
		t.Errorf("a producer after terminate: %v, want TopicTerminatedError", err)
	}
	p.Close()
	must(t, topics.Unload(plain))
	must(t, topics.Delete(plain, true, true))
	must(t, topics.Delete(parted, false, false))
	_, err = topics.GetMetadata(parted)
	wantStatus(t, "metadata of deleted topic", err, 404)
	_, err = topics.GetStats(plain)
	wantStatus(t, "stats of deleted topic", err, 404)
	_, nonPartitioned, err = topics.List(*mustNS(t, "public/default"))
	must(t, err)
	if !slices.Equal(nonPartitioned, []string{"persistent://public/default/props"}) {
		t.Errorf("after deletes: %v", nonPartitioned)
	}
	lookup, err := topics.Lookup(withProps)
	must(t, err)
	if lookup.BrokerURL != e.b.ServiceURL() || lookup.HTTPURL != e.s.URL() {
		t.Errorf("lookup = %+v", lookup)
	}
}

func mustNS(t *testing.T, s string) *utils.NameSpaceName {
	t.Helper()
	n, err := utils.GetNamespaceName(s)
	must(t, err)
	return n
}

func TestPulsarAdminStatsAfterProduceAndConsume(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n, m = 10, 4
	topic := "persistent://public/default/stats"
	c := e.client(t)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{
		Topic: topic, SubscriptionName: "workers", Name: "worker-1",
		Schema: pulsar.NewStringSchema(nil), SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest,
	})
	must(t, err)
	defer cons.Close()
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, Name: "orders-producer", DisableBatching: true, Schema: pulsar.NewStringSchema(nil)})
	must(t, err)
	defer p.Close()
	for i := range n {
		_, err := p.Send(context.Background(), &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "m%d", i)})
		must(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range m {
		msg, err := cons.Receive(ctx)
		must(t, err)
		must(t, cons.Ack(msg))
	}
	tn := *topicName(t, topic)
	brokertest.WaitForNil(t, 10*time.Second, "stats", func() error {
		st, err := e.adm.Topics().GetStats(tn)
		if err != nil {
			return err
		}
		sub := st.Subscriptions["workers"]
		if st.MsgCounterIn != n || sub.MsgBacklog != n-m {
			return fmt.Errorf("msgInCounter %d, backlog %d", st.MsgCounterIn, sub.MsgBacklog)
		}
		if len(st.Publishers) != 1 || st.Publishers[0].ProducerName != "orders-producer" || st.Publishers[0].ClientVersion == "" {
			return fmt.Errorf("publishers %+v", st.Publishers)
		}
		if len(sub.Consumers) != 1 || sub.Consumers[0].ConsumerName != "worker-1" || sub.Consumers[0].Address == "" {
			return fmt.Errorf("consumers %+v", sub.Consumers)
		}
		if sub.SubType != "Exclusive" || st.StorageSize == 0 {
			return fmt.Errorf("type %q, storage %d", sub.SubType, st.StorageSize)
		}
		return nil
	})
	// The extension: each consumer's schema type, read raw (pulsaradmin does not know it).
	resp, body := do(t, http.MethodGet, e.s.URL()+"/admin/v2/persistent/public/default/stats/stats")
	if resp.StatusCode != 200 || !strings.Contains(body, `"schemaType":"STRING"`) {
		t.Errorf("raw stats %d: %s, want schemaType STRING", resp.StatusCode, body)
	}
	// Rates are measured over a sliding window: publishing more shows a positive rate.
	brokertest.WaitForNil(t, 10*time.Second, "rate in", func() error {
		if _, err := p.Send(context.Background(), &pulsar.ProducerMessage{Payload: []byte("more")}); err != nil {
			return err
		}
		st, err := e.adm.Topics().GetStats(tn)
		if err != nil {
			return err
		}
		if st.MsgRateIn <= 0 || st.Publishers[0].MsgRateIn <= 0 {
			return fmt.Errorf("msgRateIn %v, publisher %v", st.MsgRateIn, st.Publishers[0].MsgRateIn)
		}
		return nil
	})
	// Acknowledging shows a positive ack rate on the subscription and its consumer.
	brokertest.WaitForNil(t, 10*time.Second, "ack rate", func() error {
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer rcancel()
		if msg, err := cons.Receive(rctx); err == nil {
			must(t, cons.Ack(msg))
		}
		st, err := e.adm.Topics().GetStats(tn)
		if err != nil {
			return err
		}
		sub := st.Subscriptions["workers"]
		if sub.MessageAckRate <= 0 || len(sub.Consumers) != 1 || sub.Consumers[0].MessageAckRate <= 0 {
			return fmt.Errorf("ack rate %v, consumers %+v", sub.MessageAckRate, sub.Consumers)
		}
		return nil
	})
	bulk, err := e.adm.BrokerStats().GetTopics()
	must(t, err)
	if !strings.Contains(bulk, `"public/default":{"0x00000000_0xffffffff":{"persistent":{"persistent://public/default/stats":{`) {
		t.Errorf("broker-stats/topics = %s", bulk)
	}
	resp, body = do(t, http.MethodGet, e.s.URL()+"/metrics")
	if resp.StatusCode != 200 || !strings.Contains(body, `pulsar_in_messages_total{cluster="standalone",namespace="public/default",topic="persistent://public/default/stats"}`) ||
		!strings.Contains(body, "# TYPE pulsar_subscription_back_log gauge") {
		t.Errorf("metrics %d: %s", resp.StatusCode, body)
	}
	internal, err := e.adm.Topics().GetInternalStats(tn)
	must(t, err)
	if internal.NumberOfEntries == 0 || internal.Cursors["workers"].MarkDeletePosition == "" {
		t.Errorf("internal stats = %+v", internal)
	}
}

// avgMessagesPerEntry is 0 until a consumer got an entry, then the messages per entry it got
// (upstream's moving average; here every batch has five).
func TestPulsarAdminAvgMessagesPerEntry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := "persistent://public/default/avg-per-entry"
	tn := *topicName(t, topic)
	c := e.client(t)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", Name: "c"})
	must(t, err)
	defer cons.Close()
	avg := func() (int, error) {
		st, err := e.adm.Topics().GetStats(tn)
		if err != nil {
			return 0, err
		}
		cs := st.Subscriptions["s"].Consumers
		if len(cs) != 1 {
			return 0, fmt.Errorf("consumers %+v", cs)
		}
		return cs[0].AvgMessagesPerEntry, nil
	}
	got, err := avg()
	must(t, err)
	if got != 0 {
		t.Fatalf("avgMessagesPerEntry before any message = %d, want 0", got)
	}
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, BatchingMaxMessages: 5, BatchingMaxPublishDelay: time.Hour})
	must(t, err)
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const n = 20
	errs := make(chan error, n)
	for i := range n {
		p.SendAsync(ctx, &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "m%d", i)}, func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) { errs <- err })
	}
	must(t, p.FlushWithCtx(ctx)) // the last batch is full, but only the next message would send it
	for range n {
		must(t, <-errs)
	}
	for range n {
		msg, err := cons.Receive(ctx)
		must(t, err)
		must(t, cons.Ack(msg))
	}
	got, err = avg()
	must(t, err)
	if got != 5 {
		t.Fatalf("avgMessagesPerEntry after batches of 5 = %d, want 5", got)
	}
}

func TestPulsarAdminPartitionedStats(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tn := *topicName(t, "persistent://public/default/pstats")
	must(t, e.adm.Topics().Create(tn, 2))
	c := e.client(t)
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: tn.String(), DisableBatching: true})
	must(t, err)
	defer p.Close()
	for i := range 6 {
		_, err := p.Send(context.Background(), &pulsar.ProducerMessage{Key: fmt.Sprint(i), Payload: []byte("x")})
		must(t, err)
	}
	st, err := e.adm.Topics().GetPartitionedStats(tn, true)
	must(t, err)
	if st.Metadata.Partitions != 2 || len(st.Partitions) != 2 {
		t.Fatalf("partitioned stats = %+v", st)
	}
	total := int64(0)
	for _, ps := range st.Partitions {
		total += ps.MsgCounterIn
	}
	if total != 6 {
		t.Errorf("sum of partitions' msgInCounter = %d, want 6", total)
	}
}

func TestPulsarAdminSubscriptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tn := *topicName(t, "persistent://public/default/subs")
	must(t, e.adm.Topics().Create(tn, 0))
	subs := e.adm.Subscriptions()
	must(t, subs.Create(tn, "audit", utils.Earliest))
	must(t, subs.Create(tn, "tail", utils.Latest))
	wantStatus(t, "create twice", subs.Create(tn, "audit", utils.Earliest), 409)
	c := e.client(t)
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: tn.String(), DisableBatching: true})
	must(t, err)
	defer p.Close()
	var ids []pulsar.MessageID
	for i := range 10 {
		id, err := p.Send(context.Background(), &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "m%d", i)})
		must(t, err)
		ids = append(ids, id)
	}
	list, err := subs.List(tn)
	must(t, err)
	if !slices.Equal(list, []string{"audit", "tail"}) {
		t.Errorf("subscriptions = %v", list)
	}
	backlog := func(sub string) int64 {
		st, err := e.adm.Topics().GetStats(tn)
		must(t, err)
		return st.Subscriptions[sub].MsgBacklog
	}
	if b := backlog("audit"); b != 10 {
		t.Errorf("audit backlog = %d", b)
	}
	msgs, err := subs.PeekMessages(tn, "audit", 3)
	must(t, err)
	if len(msgs) != 3 || string(msgs[0].Payload) != "m0" || string(msgs[2].Payload) != "m2" {
		t.Errorf("peek = %v", msgs)
	}
	must(t, subs.SkipMessages(tn, "audit", 4))
	if b := backlog("audit"); b != 6 {
		t.Errorf("backlog after skip 4 = %d", b)
	}
	msgs, err = subs.PeekMessages(tn, "audit", 1)
	must(t, err)
	if string(msgs[0].Payload) != "m4" {
		t.Errorf("first after skip = %q", msgs[0].Payload)
	}
	must(t, subs.ResetCursorToMessageID(tn, "audit", utils.MessageID{LedgerID: ids[2].LedgerID(), EntryID: ids[2].EntryID(), PartitionIndex: -1}))
	if b := backlog("audit"); b != 8 {
		t.Errorf("backlog after reset to m2 = %d", b)
	}
	must(t, subs.ClearBacklog(tn, "audit"))
	if b := backlog("audit"); b != 0 {
		t.Errorf("backlog after skip_all = %d", b)
	}
	must(t, subs.ResetCursorToTimestamp(tn, "audit", 0))
	if b := backlog("audit"); b != 10 {
		t.Errorf("backlog after reset to time 0 = %d", b)
	}
	must(t, subs.ExpireMessages(tn, "audit", 0))
	if b := backlog("audit"); b != 0 {
		t.Errorf("backlog after expiring everything = %d", b)
	}
	byID, err := subs.GetMessagesByID(tn, ids[5].LedgerID(), ids[5].EntryID())
	must(t, err)
	if len(byID) != 1 || string(byID[0].Payload) != "m5" {
		t.Errorf("messages by id = %+v", byID)
	}
	// A missing subscription is created by the peek (peek_create_test.go).
	_, err = subs.PeekMessages(tn, "audit", 1)
	wantStatus(t, "peek beyond the backlog", err, 404)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: tn.String(), SubscriptionName: "tail"})
	must(t, err)
	wantStatus(t, "delete a subscription with a consumer", subs.Delete(tn, "tail"), 412)
	must(t, subs.ForceDelete(tn, "tail"))
	cons.Close()
	must(t, subs.Delete(tn, "audit"))
	wantStatus(t, "delete twice", subs.Delete(tn, "audit"), 404)
}

func TestPulsarAdminPeekBatchedLZ4(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tn := *topicName(t, "persistent://public/default/batched")
	must(t, e.adm.Topics().Create(tn, 0))
	must(t, e.adm.Subscriptions().Create(tn, "peeked", utils.Earliest))
	c := e.client(t)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: tn.String(), SubscriptionName: "read", SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
	must(t, err)
	defer cons.Close()
	p, err := c.CreateProducer(pulsar.ProducerOptions{
		Topic: tn.String(), CompressionType: pulsar.LZ4,
		BatchingMaxMessages: 5, BatchingMaxPublishDelay: time.Hour,
	})
	must(t, err)
	defer p.Close()
	const n = 5
	done := make(chan error, n)
	for i := range n {
		p.SendAsync(context.Background(), &pulsar.ProducerMessage{
			Payload:    []byte(strings.Repeat(fmt.Sprintf("payload %d ", i), 20)),
			Properties: map[string]string{"i": fmt.Sprint(i)},
		}, func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) { done <- err })
	}
	must(t, p.FlushWithCtx(context.Background()))
	for range n {
		must(t, <-done)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []string
	for range n {
		m, err := cons.Receive(ctx)
		must(t, err)
		got = append(got, string(m.Payload()))
	}
	peeked, err := e.adm.Subscriptions().PeekMessages(tn, "peeked", n)
	must(t, err)
	if len(peeked) != n {
		t.Fatalf("peeked %d messages, want %d", len(peeked), n)
	}
	for i, m := range peeked {
		if string(m.Payload) != got[i] {
			t.Errorf("message %d: peeked %q, consumer got %q", i, m.Payload, got[i])
		}
		if m.GetMessageID().BatchIndex != i {
			t.Errorf("message %d: batch index %d", i, m.GetMessageID().BatchIndex)
		}
	}
	if peeked[0].Properties["X-Pulsar-Num-Batch-Message"] != fmt.Sprint(n) {
		t.Errorf("batch header: %v", peeked[0].Properties)
	}
	resp, _ := do(t, http.MethodGet, e.s.URL()+"/admin/v2/persistent/public/default/batched/subscription/peeked/position/1")
	if resp.Header.Get("X-Pulsar-compression") != "LZ4" || resp.Header.Get("X-Pulsar-num-batch-message") != "5" {
		t.Errorf("headers = %v", resp.Header)
	}
}

func TestPulsarAdminSchemas(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topic := "persistent://public/default/typed"
	c := e.client(t)
	def := `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, Schema: pulsar.NewJSONSchema(def, nil)})
	must(t, err)
	p.Close()
	sc := e.adm.Schemas()
	info, err := sc.GetSchemaInfoWithVersion(topic)
	must(t, err)
	if info.Version != 0 || info.SchemaInfo.Type != "JSON" || !strings.Contains(string(info.SchemaInfo.Schema), `"name":"Order"`) {
		t.Errorf("schema = %+v %+v", info, info.SchemaInfo)
	}
	def = string(info.SchemaInfo.Schema) // the client normalises the definition
	// Under the default strategy (FULL) a new field needs a default; without one the new
	// version is refused with 409, as upstream.
	bad := `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"n","type":["null","int"]}]}`
	if err := sc.CreateSchemaByPayload(topic, utils.PostSchemaPayload{SchemaType: "JSON", Schema: bad, Properties: map[string]string{}}); err == nil || !strings.Contains(err.Error(), "409") {
		t.Errorf("incompatible schema accepted or refused wrongly: %v", err)
	}
	def2 := `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"n","type":["null","int"],"default":null}]}`
	must(t, sc.CreateSchemaByPayload(topic, utils.PostSchemaPayload{SchemaType: "JSON", Schema: def2, Properties: map[string]string{}}))
	all, err := sc.GetAllSchemas(topic)
	must(t, err)
	if len(all) != 2 || all[1].Version != 1 {
		t.Errorf("all schemas = %v", all)
	}
	v, err := sc.GetVersionByPayload(topic, utils.PostSchemaPayload{SchemaType: "JSON", Schema: def, Properties: map[string]string{}})
	must(t, err)
	if v != 0 {
		t.Errorf("version of the first schema = %d", v)
	}
	first, err := sc.GetSchemaInfoByVersion(topic, 0)
	must(t, err)
	if string(first.Schema) != def {
		t.Errorf("version 0 = %s", first.Schema)
	}
	comp, err := sc.TestCompatibilityWithPostSchemaPayload(topic, utils.PostSchemaPayload{SchemaType: "JSON", Schema: def2})
	must(t, err)
	if !comp.IsCompatibility || comp.SchemaCompatibilityStrategy != "FULL" {
		t.Errorf("compatibility = %+v", comp)
	}
	must(t, sc.DeleteSchema(topic))
	_, err = sc.GetSchemaInfo(topic)
	wantStatus(t, "schema after delete", err, 404)
}
