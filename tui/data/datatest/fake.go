// Package datatest is a fake cluster for the TUI's tests: a data.Source over fixed snapshots
// (topics, stats, messages, dead letters, a replay engine) that the golden and flow tests render
// from. Only tests import it, so none of it is built into letterbox.
package datatest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// FakeEpoch is the fixed instant the fake snapshots are taken at; tests pair it with a fake
// clock so "age" columns never drift.
var FakeEpoch = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

// Fake is a Source over fixed, deterministic snapshots: golden tests and the guide's captures
// render from it. Its fields may be changed between calls (under Lock) to simulate a live
// cluster; Err, when set, fails every call.
type Fake struct {
	sync.Mutex
	Name     string
	NS       []string
	Rows     []data.TopicRow
	Details  map[string]*data.TopicDetail
	Schemas  map[string]*data.SchemaInfo
	Messages map[string][]data.Message // by topic; peeks of every subscription see the same backlog
	TailMsgs []data.Message
	TailEnd  error // when set, the tail ends with it after TailMsgs
	// TailLinks are connection news the tail sends after TailMsgs (a lost broker, back again).
	TailLinks []data.Link
	Produced  []data.ProduceRequest
	Err       error
	// Flow, dead letters and replay (flow.go).
	Retentions      map[string]data.Retention // by "tenant/ns"
	ReplayHold      chan struct{}
	ReplayHoldAfter int
	// ScanHold, when set, stops a scan half way (one progress report) until it is closed;
	// ScanErr, when set, then ends it with that error (a DLQ deleted under the scan).
	ScanHold chan struct{}
	ScanErr  error
	Replays  []data.HistoryEntry // the replay history, oldest first
	Resent   []data.ReplayEdit   // what edited resends sent
	// ListsWithoutStats makes Topics list the rows without their stats, as a cluster too
	// large for broker-wide stats does; RowDetails then gives them. Asked records every
	// RowDetails call's topics, Listings counts Topics calls.
	ListsWithoutStats bool
	Asked             [][]string
	Listings          int
}

var _ data.Source = (*Fake)(nil)

func (f *Fake) fail() error {
	f.Lock()
	defer f.Unlock()
	return f.Err
}

// Service is the service URL a fake cluster would have.
func (f *Fake) Service() string { return "pulsar://127.0.0.1:6650" }

func (f *Fake) Endpoint() string {
	if f.Name == "" {
		return "http://127.0.0.1:8080"
	}
	return f.Name
}

func (f *Fake) Namespaces(ctx context.Context) ([]string, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	f.Lock()
	defer f.Unlock()
	return slices.Clone(f.NS), nil
}

func (f *Fake) Topics(ctx context.Context, ns string) ([]data.TopicRow, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	f.Lock()
	defer f.Unlock()
	f.Listings++
	var out []data.TopicRow
	for _, r := range f.Rows {
		if ns == "" || r.Namespace == ns {
			if f.ListsWithoutStats {
				r.Stats, r.StatsKnown = data.Stats{}, false
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// RowDetails gives the rows of the named topics as the fake holds them, stats known.
func (f *Fake) RowDetails(ctx context.Context, topics []string) (map[string]data.TopicRow, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	f.Lock()
	defer f.Unlock()
	f.Asked = append(f.Asked, slices.Clone(topics))
	out := map[string]data.TopicRow{}
	for _, r := range f.Rows {
		if slices.Contains(topics, r.Name) {
			r.StatsKnown = true
			out[r.Name] = r
		}
	}
	return out, nil
}

func (f *Fake) TopicDetail(ctx context.Context, topic string) (*data.TopicDetail, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	f.Lock()
	defer f.Unlock()
	d, ok := f.Details[topic]
	if !ok {
		return nil, data.TopicNotFound(topic)
	}
	c := *d
	for _, r := range f.Rows {
		if r.Name == topic {
			c.Verdict, c.VerdictKnown = r.Verdict, true
		}
	}
	c.Subscriptions = slices.Clone(d.Subscriptions)
	for i := range c.Subscriptions {
		c.Subscriptions[i].Consumers = slices.Clone(d.Subscriptions[i].Consumers)
	}
	return &c, nil
}

func (f *Fake) Schema(ctx context.Context, topic string) (*data.SchemaInfo, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	f.Lock()
	defer f.Unlock()
	return f.Schemas[topic], nil
}

func (f *Fake) Peek(ctx context.Context, topic, sub string, from, n int) ([]data.Message, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	f.Lock()
	defer f.Unlock()
	// As the admin API: a peek of a topic or a subscription that is not there is a 404.
	d, ok := f.Details[topic]
	if !ok {
		return nil, data.TopicNotFound(topic)
	}
	if !slices.ContainsFunc(d.Subscriptions, func(s data.Subscription) bool { return s.Name == sub }) {
		return nil, data.SubscriptionNotFound(topic, sub)
	}
	all := f.Messages[topic]
	if from < 1 {
		from = 1
	}
	if from > len(all) {
		return nil, nil
	}
	end := min(len(all), from-1+n)
	out := slices.Clone(all[from-1 : end])
	for i := range out {
		out[i].Position = from + i
		out[i].RedeliveriesKnown = false
	}
	return out, nil
}

func (f *Fake) Tail(ctx context.Context, topic string) (<-chan data.TailEvent, func(), error) {
	if err := f.fail(); err != nil {
		return nil, nil, err
	}
	f.Lock()
	msgs, end, links := slices.Clone(f.TailMsgs), f.TailEnd, slices.Clone(f.TailLinks)
	f.Unlock()
	ch := make(chan data.TailEvent, len(msgs)+len(links)+1)
	for _, m := range msgs {
		ch <- data.TailEvent{Msg: m}
	}
	for _, l := range links {
		ch <- data.TailEvent{Link: l}
	}
	if end != nil {
		ch <- data.TailEvent{Err: end}
	}
	var once sync.Once
	return ch, func() { once.Do(func() { close(ch) }) }, nil
}

func (f *Fake) Produce(ctx context.Context, topic string, req data.ProduceRequest) (string, error) {
	if err := f.fail(); err != nil {
		return "", err
	}
	f.Lock()
	defer f.Unlock()
	f.Produced = append(f.Produced, req)
	return fmt.Sprintf("%d:%d:-1", 100+len(f.Produced), len(f.Produced)-1), nil
}

// NewFake returns the standard snapshot: three namespaces, a partitioned topic, an orders
// topic with its retry and DLQ topics, consumers with JSON, AVRO, AUTO_CONSUME and unreported
// schema types, and a backlog mixing JSON, text and binary payloads.
func NewFake() *Fake {
	f := &Fake{
		NS:       []string{"acme/billing", "public/default", "public/demo"},
		Details:  map[string]*data.TopicDetail{},
		Schemas:  map[string]*data.SchemaInfo{},
		Messages: map[string][]data.Message{},
	}
	row := func(name string, parts int, s data.Stats) {
		n := data.ParseTopic(name)
		r := data.TopicRow{Name: n.String(), Namespace: n.NamespaceName(), Local: n.Local, Partitions: parts, StatsKnown: true, Stats: s}
		if naming.PartitionIndex(r.Name) >= 0 {
			r.Parent = naming.BaseName(r.Name)
		}
		f.Rows = append(f.Rows, r)
	}
	row("public/demo/orders", 0, data.Stats{RateIn: 42.5, RateOut: 40.1, Backlog: 118, Storage: 3_481_600, Subscriptions: 2, Producers: 2, Consumers: 3})
	row("public/demo/orders-billing-RETRY", 0, data.Stats{RateIn: 3.2, RateOut: 3.1, Backlog: 7, Storage: 91_204, Subscriptions: 1, Producers: 1, Consumers: 1})
	row("public/demo/orders-billing-DLQ", 0, data.Stats{RateIn: 0.4, Backlog: 36, Storage: 40_960, Subscriptions: 1, Producers: 1})
	// The Key_Shared group of three reads every partition: three consumers on each.
	row("public/demo/payments", 3, data.Stats{RateIn: 120, RateOut: 119.5, Backlog: 12, Storage: 12_582_912, Subscriptions: 1, Producers: 3, Consumers: 9})
	row("public/demo/payments-partition-0", 0, data.Stats{RateIn: 40, RateOut: 39.9, Backlog: 4, Storage: 4_194_304, Subscriptions: 1, Producers: 1, Consumers: 3})
	row("public/demo/payments-partition-1", 0, data.Stats{RateIn: 41, RateOut: 40.8, Backlog: 5, Storage: 4_194_304, Subscriptions: 1, Producers: 1, Consumers: 3})
	row("public/demo/payments-partition-2", 0, data.Stats{RateIn: 39, RateOut: 38.8, Backlog: 3, Storage: 4_194_304, Subscriptions: 1, Producers: 1, Consumers: 3})
	row("public/demo/audit", 0, data.Stats{RateIn: 0, Storage: 1_024, Subscriptions: 0})
	row("public/default/events", 0, data.Stats{RateIn: 5, RateOut: 5, Storage: 204_800, Subscriptions: 1, Producers: 1, Consumers: 1})
	row("acme/billing/invoices", 0, data.Stats{RateIn: 1.5, RateOut: 0, Backlog: 2_340, Storage: 2_097_152, Subscriptions: 1, Producers: 1})
	row("acme/billing/invoices-archiver-DLQ", 0, data.Stats{Backlog: 3, Storage: 3_072, Subscriptions: 0, Producers: 0})

	orders := "persistent://public/demo/orders"
	f.Details[orders] = &data.TopicDetail{
		Name: orders, Stats: f.Rows[0].Stats, SchemaTypesReported: true,
		Producers: []data.Producer{{Name: "checkout-1", Address: "/127.0.0.1:51234", RateIn: 30.5}, {Name: "checkout-2", Address: "/127.0.0.1:51240", RateIn: 12}},
		Subscriptions: []data.Subscription{
			{Name: "billing", Type: "Shared", Backlog: 118, RateOut: 35.1, RateRedeliver: 2.4, Unacked: 9, Consumers: []data.Consumer{
				{Name: "billing-a", Address: "/127.0.0.1:51300", Permits: 991, Unacked: 5, RateOut: 17.6, SchemaType: "JSON"},
				{Name: "billing-b", Address: "/127.0.0.1:51302", Permits: 996, Unacked: 4, RateOut: 17.5, SchemaType: "JSON"},
			}},
			{Name: "audit-sink", Type: "Exclusive", RateOut: 5, Consumers: []data.Consumer{
				{Name: "auditor", Address: "/127.0.0.1:51310", Permits: 1000, RateOut: 5, SchemaType: "AUTO_CONSUME"},
			}},
		},
	}
	f.Schemas[orders] = &data.SchemaInfo{Type: "JSON", Version: 2, Definition: `{"type":"record","name":"Order","fields":[{"name":"id","type":"string"},{"name":"amount","type":"double"},{"name":"currency","type":"string"}]}`}
	payments := "persistent://public/demo/payments"
	f.Details[payments] = &data.TopicDetail{
		Name: payments, Partitions: 3, Stats: f.Rows[3].Stats, SchemaTypesReported: false,
		Subscriptions: []data.Subscription{{Name: "ledger", Type: "Key_Shared", Backlog: 12, RateOut: 119.5}},
	}
	// A Key_Shared group of three reads every partition: each consumer is one per partition.
	for part := range 3 {
		for i, addr := range []string{"/10.0.0.7:40001", "/10.0.0.8:40001", "/10.0.0.9:40001"} {
			f.Details[payments].Subscriptions[0].Consumers = append(f.Details[payments].Subscriptions[0].Consumers,
				data.Consumer{Name: fmt.Sprintf("ledger-%d", i), Address: addr, Permits: 500, RateOut: 13.3, Partition: part})
		}
	}
	dlq := "persistent://public/demo/orders-billing-DLQ"
	f.Details[dlq] = &data.TopicDetail{Name: dlq, Stats: f.Rows[2].Stats, SchemaTypesReported: true,
		Subscriptions: []data.Subscription{{Name: "billing-replay", Type: "Exclusive", Backlog: 36}}}

	t := func(sec int) time.Time { return FakeEpoch.Add(time.Duration(-sec) * time.Second) }
	var msgs []data.Message
	for i := range 6 {
		msgs = append(msgs, data.Message{
			ID: fmt.Sprintf("12:%d:-1", 40+i), Topic: orders, Key: fmt.Sprintf("order-%d", 1001+i),
			Properties:  map[string]string{"source": "checkout"},
			PublishTime: t(300 - i*37), EventTime: t(301 - i*37),
			Payload: fmt.Appendf(nil, `{"id":"o-%d","amount":%d.50,"currency":"EUR","lines":[{"sku":"A-%d","qty":%d}]}`, 1001+i, 20+i*3, i, 1+i%3),
		})
	}
	msgs[2].Properties = map[string]string{"source": "legacy", "content-type": "text/plain"}
	msgs[2].Payload = []byte("order 1003 cancelled by customer")
	msgs[4].Payload = []byte{0x0a, 0x05, 'o', '-', '1', '0', '5', 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x41, 0x40, 0xff, 0x00}
	f.Messages[orders] = msgs
	var dead []data.Message
	for i := range 4 {
		dead = append(dead, data.Message{
			ID: fmt.Sprintf("7:%d:-1", i), Topic: dlq, Key: fmt.Sprintf("order-%d", 990+i),
			Properties: map[string]string{"RECONSUMETIMES": "3", "REAL_TOPIC": orders,
				"ORIGIN_MESSAGE_ID": fmt.Sprintf("12:%d:-1", 3+i), "reason": "currency not supported"},
			PublishTime: t(4000 - i*600),
			Payload:     fmt.Appendf(nil, `{"id":"o-%d","amount":9.99,"currency":"XTS"}`, 990+i),
		})
	}
	// A letter replayed twice that died again.
	dead[1].Properties["REPLAY_COUNT"] = "2"
	dead[1].Properties["REPLAYED_FROM"] = dlq
	f.Messages[dlq] = dead
	f.TailMsgs = []data.Message{{ID: "12:99:-1", Topic: orders, Key: "order-2001", PublishTime: FakeEpoch,
		Properties: map[string]string{}, Payload: []byte(`{"id":"o-2001","amount":5,"currency":"EUR"}`),
		Redeliveries: 0, RedeliveriesKnown: true}}
	f.addFlow()
	f.Classify()
	return f
}

// Classify sets every row's verdict by the rule as far as names tell (the fake has no
// purposes or samples); call it after changing Rows.
func (f *Fake) Classify() {
	f.Lock()
	defer f.Unlock()
	data.ClassifyByName(f.Rows)
}

// SetSchemaType changes a consumer's reported schema type, as a live broker would after that
// consumer reconnects with another schema.
func (f *Fake) SetSchemaType(topic, consumer, schemaType string) {
	f.Lock()
	defer f.Unlock()
	d := f.Details[topic]
	if d == nil {
		return
	}
	for i := range d.Subscriptions {
		for j := range d.Subscriptions[i].Consumers {
			if strings.EqualFold(d.Subscriptions[i].Consumers[j].Name, consumer) {
				d.Subscriptions[i].Consumers[j].SchemaType = schemaType
			}
		}
	}
}
