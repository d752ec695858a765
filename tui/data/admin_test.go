package data

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	_ "github.com/letterbox-dev/letterbox/tui/tuitest" // the -update flag of `go test ./tui/...`
)

// upstreamAdmin answers the admin REST paths Admin uses with upstream-shaped JSON. It stands in
// for broker/web until that serves these routes; the end-to-end test runs against the real one.
func upstreamAdmin(t *testing.T, bulk bool) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	js := func(path, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(body))
		})
	}
	js("GET /admin/v2/tenants", `["public"]`)
	js("GET /admin/v2/namespaces/public", `["public/default"]`)
	js("GET /admin/v2/persistent/public/default", `["persistent://public/default/orders","persistent://public/default/pay-partition-0","persistent://public/default/pay-partition-1","persistent://public/default/orders-sub-DLQ"]`)
	js("GET /admin/v2/persistent/public/default/partitioned", `["persistent://public/default/pay"]`)
	js("GET /admin/v2/persistent/public/default/orders/stats", `{"msgRateIn":2.5,"storageSize":100,"publishers":[{"producerName":"p1","msgRateIn":2.5}],
	 "subscriptions":{"sub":{"type":"Shared","msgBacklog":7,"consumers":[{"consumerName":"c1","availablePermits":10,"schemaType":"AUTO_CONSUME"},{"consumerName":"c2"}]}}}`)
	js("GET /admin/v2/persistent/public/default/pay-partition-0/stats", `{"msgRateIn":1,"storageSize":10,"subscriptions":{"s":{"msgBacklog":1}}}`)
	js("GET /admin/v2/persistent/public/default/pay-partition-1/stats", `{"msgRateIn":2,"storageSize":20,"subscriptions":{"s":{"msgBacklog":2}}}`)
	js("GET /admin/v2/persistent/public/default/orders-sub-DLQ/stats", `{}`)
	js("GET /admin/v2/persistent/public/default/pay/partitioned-stats", `{"msgRateIn":3,"storageSize":30,"subscriptions":{"s":{"msgBacklog":3}}}`)
	js("GET /admin/v2/persistent/public/default/orders/partitions", `{"partitions":0}`)
	js("GET /admin/v2/schemas/public/default/orders/schema", `{"version":1,"type":"JSON","data":"{\"type\":\"record\"}","properties":{}}`)
	if bulk {
		js("GET /admin/v2/broker-stats/topics", `{"public/default":{"0x00000000_0xffffffff":{"persistent":{
		  "persistent://public/default/orders":{"msgRateIn":9,"subscriptions":{}}}}}}`)
	}
	mux.HandleFunc("GET /admin/v2/persistent/public/default/orders/subscription/sub/position/{n}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("n") != "1" {
			http.Error(w, `{"reason":"Message not found"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("X-Pulsar-Message-ID", "3:4")
		w.Header().Set("X-Pulsar-Publish-Time", "2026-03-14T09:26:53.000Z")
		w.Header().Set("X-Pulsar-Property-RECONSUMETIMES", "2")
		w.Header().Set("X-Pulsar-partition-key", "k1")
		w.Write([]byte(`{"a":1}`))
	})
	mux.HandleFunc("GET /admin/v2/persistent/public/default/orders/subscription/nosub/position/{n}", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"reason":"Subscription not found"}`, http.StatusNotFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// Without broker-wide stats the listing comes without stats, and RowDetails gives those of the
// rows asked for, one stats call each: a partitioned topic's summed over its partitions.
func TestAdminRowDetails(t *testing.T) {
	srv := upstreamAdmin(t, false)
	a, err := NewAdmin(AdminOptions{AdminURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rows, err := a.Topics(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("got %d rows: %+v", len(rows), rows)
	}
	var names []string
	for _, r := range rows {
		if r.StatsKnown && r.Partitions == 0 {
			t.Errorf("%s listed with stats, without a bulk endpoint", r.Name)
		}
		names = append(names, r.Name)
	}
	details, err := a.RowDetails(ctx, names)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]TopicRow{}
	for _, r := range rows {
		d := details[r.Name]
		r.Stats, r.StatsKnown = d.Stats, d.StatsKnown
		if d.Kind != KindTopic {
			r.Verdict = d.Verdict
		}
		byName[r.Local] = r
	}
	if r := byName["pay"]; r.Partitions != 2 || r.RateIn != 3 || r.Storage != 30 || r.Backlog != 3 || !r.StatsKnown {
		t.Errorf("pay = %+v, want 2 partitions summed", r)
	}
	if r := byName["pay-partition-1"]; r.Parent != "persistent://public/default/pay" || r.RateIn != 2 {
		t.Errorf("partition = %+v", r)
	}
	if r := byName["orders"]; r.RateIn != 2.5 || r.Backlog != 7 || r.Consumers != 2 || r.Producers != 1 || !r.StatsKnown {
		t.Errorf("orders = %+v", r)
	}
	if byName["orders-sub-DLQ"].Kind != KindDLQ {
		t.Errorf("DLQ not recognised")
	}
}

func TestAdminBulkStats(t *testing.T) {
	srv := upstreamAdmin(t, true)
	a, _ := NewAdmin(AdminOptions{AdminURL: srv.URL})
	rows, err := a.Topics(context.Background(), "public/default")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Local == "orders" && r.RateIn != 9 {
			t.Errorf("orders rate = %v, want the bulk value 9", r.RateIn)
		}
	}
}

func TestAdminDetailSchemaPeek(t *testing.T) {
	srv := upstreamAdmin(t, false)
	a, _ := NewAdmin(AdminOptions{AdminURL: srv.URL})
	ctx := context.Background()
	d, err := a.TopicDetail(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Subscriptions) != 1 || len(d.Subscriptions[0].Consumers) != 2 || !d.SchemaTypesReported {
		t.Fatalf("detail = %+v", d)
	}
	if c := d.Subscriptions[0].Consumers; c[0].SchemaType != "AUTO_CONSUME" || c[1].SchemaType != "" {
		t.Errorf("schema types = %q %q", c[0].SchemaType, c[1].SchemaType)
	}
	s, err := a.Schema(ctx, "persistent://public/default/orders")
	if err != nil || s.Type != "JSON" || s.Version != 1 {
		t.Errorf("schema = %+v %v", s, err)
	}
	if s, err := a.Schema(ctx, "public/default/none"); s != nil || err != nil {
		t.Errorf("missing schema = %+v %v, want nil nil", s, err)
	}
	msgs, err := a.Peek(ctx, "orders", "sub", 1, 10)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("peek = %+v %v", msgs, err)
	}
	m := msgs[0]
	if m.ID != "3:4" || m.Key != "k1" || string(m.Payload) != `{"a":1}` || m.RedeliveriesKnown || m.PublishTime.IsZero() {
		t.Errorf("message = %+v", m)
	}
	if v, ok := m.ReconsumeTimes(); !ok || v != "2" {
		t.Errorf("RECONSUMETIMES = %q %v (properties %v)", v, ok, m.Properties)
	}
	if _, err := a.Peek(ctx, "orders", "nosub", 1, 10); err == nil {
		t.Errorf("peek of a missing subscription: no error")
	}
}

func TestAdminError(t *testing.T) {
	srv := upstreamAdmin(t, false)
	a, _ := NewAdmin(AdminOptions{AdminURL: srv.URL})
	_, err := a.TopicDetail(context.Background(), "acme/x/y")
	if err == nil {
		t.Fatal("no error for an unknown tenant")
	}
	if _, err := NewAdmin(AdminOptions{AdminURL: "ftp://x"}); err == nil {
		t.Error("ftp URL accepted")
	}
}
