package admin_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

var quiet = slog.New(slog.DiscardHandler)

// start starts a broker with its admin API (pulsartest) and a client of it with a 10 s
// timeout.
func start(t *testing.T) (*pulsartest.Broker, *admin.Client) {
	t.Helper()
	b := pulsartest.Start(t)
	c, err := admin.New(admin.Options{URL: b.AdminURL(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return b, c
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestAdminClient(t *testing.T) {
	t.Parallel()
	b, c := start(t)
	x := ctx(t)
	clusters, err := c.Clusters(x)
	must(t, err)
	if !slices.Equal(clusters, []string{"standalone"}) {
		t.Errorf("clusters = %v", clusters)
	}
	must(t, c.CreateTenant(x, "acme", adminapi.TenantInfo{AllowedClusters: []string{"standalone"}}))
	if err := c.CreateTenant(x, "acme", adminapi.TenantInfo{AllowedClusters: []string{"standalone"}}); admin.StatusOf(err) != 409 {
		t.Errorf("tenant twice: %v", err)
	}
	must(t, c.CreateNamespace(x, "acme/app"))
	must(t, c.SetRetention(x, "acme/app", adminapi.RetentionPolicies{RetentionTimeInMinutes: 5}))
	must(t, c.SetAutoSubscriptionCreation(x, "acme/app", true))
	must(t, c.SetDeduplication(x, "acme/app", true))
	pol, err := c.NamespacePolicies(x, "acme/app")
	must(t, err)
	if pol.RetentionPolicies == nil || pol.RetentionPolicies.RetentionTimeInMinutes != 5 || pol.DeduplicationEnabled == nil {
		t.Errorf("policies = %+v", pol)
	}
	topic := "persistent://acme/app/orders"
	must(t, c.CreateTopic(x, topic, 0, nil))
	must(t, c.CreateTopic(x, "persistent://acme/app/parted", 2, map[string]string{"k": "v"}))
	topics, err := c.Topics(x, "acme/app", true)
	must(t, err)
	if len(topics) != 3 {
		t.Errorf("topics = %v", topics)
	}
	np, err := c.Topics(x, "acme/app", false)
	must(t, err)
	if len(np) != 0 {
		t.Errorf("non-persistent = %v", np)
	}
	parted, err := c.PartitionedTopics(x, "acme/app", true)
	must(t, err)
	if !slices.Equal(parted, []string{"persistent://acme/app/parted"}) {
		t.Errorf("partitioned = %v", parted)
	}
	if n, err := c.Partitions(x, "persistent://acme/app/parted"); err != nil || n != 2 {
		t.Errorf("partitions = %d, %v", n, err)
	}
	must(t, c.CreateSubscription(x, topic, "audit", adminapi.Earliest))

	pc, err := pulsar.NewClient(pulsar.ClientOptions{URL: b.ServiceURL(), Logger: plog.NewLoggerWithSlog(quiet), OperationTimeout: 10 * time.Second})
	must(t, err)
	defer pc.Close()
	p, err := pc.CreateProducer(pulsar.ProducerOptions{Topic: topic, CompressionType: pulsar.ZSTD, BatchingMaxMessages: 3, BatchingMaxPublishDelay: time.Hour})
	must(t, err)
	defer p.Close()
	done := make(chan error, 3)
	for i := range 3 {
		p.SendAsync(x, &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "msg-%d", i), Properties: map[string]string{"n": fmt.Sprint(i)}},
			func(_ pulsar.MessageID, _ *pulsar.ProducerMessage, err error) { done <- err })
	}
	must(t, p.FlushWithCtx(x))
	for range 3 {
		must(t, <-done)
	}
	msgs, err := c.Peek(x, topic, "audit", 10)
	must(t, err)
	if len(msgs) != 3 {
		t.Fatalf("peek = %d messages, want 3", len(msgs))
	}
	for i, m := range msgs {
		if string(m.Payload) != fmt.Sprintf("msg-%d", i) || m.Properties["n"] != fmt.Sprint(i) || m.ID.BatchIndex != i {
			t.Errorf("message %d = %q %v %+v", i, m.Payload, m.Properties, m.ID)
		}
	}
	st, err := c.Stats(x, topic)
	must(t, err)
	if st.MsgInCounter != 3 || st.Subscriptions["audit"].MsgBacklog != 1 || len(st.Publishers) != 1 {
		t.Errorf("stats = %+v", st)
	}
	all, err := c.BrokerTopicStats(x)
	must(t, err)
	if all[topic].MsgInCounter != 3 {
		t.Errorf("broker topic stats = %v", all)
	}
	must(t, c.SkipMessages(x, topic, "audit", 1))
	if msgs, err := c.Peek(x, topic, "audit", 1); !admin.IsNotFound(err) {
		t.Errorf("peek of an empty backlog = %v, %v; want 404", msgs, err)
	}
	must(t, c.ResetCursorToTime(x, topic, "audit", 0))
	if msgs, err = c.Peek(x, topic, "audit", 3); err != nil || len(msgs) != 3 {
		t.Errorf("peek after reset = %d, %v", len(msgs), err)
	}
	last, err := c.LastMessageID(x, topic)
	must(t, err)
	byID, err := c.MessagesByID(x, topic, last.LedgerID, last.EntryID)
	must(t, err)
	if len(byID) != 3 {
		t.Errorf("messages by id = %d", len(byID))
	}
	must(t, c.ClearBacklog(x, topic, "audit"))
	subs, err := c.Subscriptions(x, topic)
	must(t, err)
	if !slices.Equal(subs, []string{"audit"}) {
		t.Errorf("subscriptions = %v", subs)
	}
	must(t, c.CreateSchema(x, topic, "STRING", "", nil))
	sc, err := c.Schema(x, topic, -1)
	must(t, err)
	if sc.Type != "STRING" || sc.Version != 0 {
		t.Errorf("schema = %+v", sc)
	}
	if _, err := c.Schema(x, "persistent://acme/app/none", -1); !admin.IsNotFound(err) {
		t.Errorf("missing schema: %v", err)
	}
	lk, err := c.Lookup(x, topic)
	must(t, err)
	if lk.BrokerURL != b.ServiceURL() || lk.NativeURL != b.ServiceURL() {
		t.Errorf("lookup = %+v", lk)
	}
	p.Close()
	must(t, c.DeleteSubscription(x, topic, "audit", true))
	must(t, c.DeleteTopic(x, topic, false, true))
	must(t, c.DeleteTopic(x, "persistent://acme/app/parted", true, true))
	must(t, c.DeleteNamespace(x, "acme/app", false))
	must(t, c.DeleteTenant(x, "acme", false))
}

func TestBearerTokenAndTimeout(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/admin/v2/clusters" {
			got <- r.Header.Get("Authorization")
			w.Write([]byte(`["c"]`))
			return
		}
		select { // a server that never answers in time
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c, err := admin.New(admin.Options{URL: srv.URL, Token: "s3cret", Timeout: 200 * time.Millisecond})
	must(t, err)
	if _, err := c.Clusters(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if h := <-got; h != "Bearer s3cret" {
		t.Errorf("Authorization = %q", h)
	}
	// The client's own timeout ends the request (ctx(t) bounds the test itself).
	if _, err := c.Tenants(ctx(t)); err == nil {
		t.Error("a request past the timeout succeeded")
	}
	if _, err := admin.New(admin.Options{URL: "ftp://x"}); err == nil {
		t.Error("ftp URL accepted")
	}
}
