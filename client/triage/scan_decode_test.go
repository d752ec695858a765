package triage_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/client/expr"
	"github.com/letterbox-dev/letterbox/client/triage"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

const orderAvro = `{"type":"record","name":"Order","fields":[{"name":"id","type":"int"},{"name":"item","type":"string"}]}`

type order struct {
	ID   int    `avro:"id"`
	Item string `avro:"item"`
}

// avroDLQ has the official Go client's dead-letter router move n letters of an Avro topic into
// its DLQ: every fifth one of each five from 3 on (i%5 >= 3) put on the topic by a schemaless
// producer, which does not decode, the others Avro orders. The consumer fails them all. It
// returns the DLQ's name.
func avroDLQ(t *testing.T, env *brokertest.Env, ctx context.Context, n int) string {
	t.Helper()
	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: env.ServiceURL, OperationTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	origin, dlq := ns+"orders", ns+"orders-billing-DLQ"
	schema := pulsar.NewAvroSchema(orderAvro, nil)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: origin, SubscriptionName: "billing", Type: pulsar.Shared,
		Schema: schema, NackRedeliveryDelay: 20 * time.Millisecond,
		DLQ: &pulsar.DLQPolicy{MaxDeliveries: 1, DeadLetterTopic: dlq, InitialSubscriptionName: "billing-keep"}})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	typed, err := c.CreateProducer(pulsar.ProducerOptions{Topic: origin, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer typed.Close()
	raw, err := c.CreateProducer(pulsar.ProducerOptions{Topic: origin})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for i := range n {
		var err error
		if i%5 < 3 {
			_, err = typed.Send(ctx, &pulsar.ProducerMessage{Value: &order{ID: i, Item: "book"}})
		} else {
			_, err = raw.Send(ctx, &pulsar.ProducerMessage{Payload: fmt.Appendf(nil, "not avro %d {}", i)})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// The consumer fails every letter: its downstream is down, and some do not decode anyway.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := cons.Receive(ctx)
			if err != nil {
				return
			}
			cons.Nack(m)
		}
	}()
	brokertest.WaitFor(t, 30*time.Second, fmt.Sprintf("%d letters in the DLQ", n), func() bool {
		st, err := env.Admin.Stats(ctx, dlq)
		return err == nil && st.MsgInCounter == int64(n)
	})
	cons.Close()
	<-done
	return dlq
}

// TestScanPayloadDecodes: the official Go client's dead-letter router moves 6 Avro orders
// and 4 payloads a schemaless producer put on the Avro topic into the DLQ (its consumer
// fails them all); "payload decodes" selects the 6 by the schema the router registered on
// the DLQ, "payload does not decode" the 4.
func TestScanPayloadDecodes(t *testing.T) {
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	dlq := avroDLQ(t, env, ctx, 10)

	cl := env.Client(t)
	for _, tc := range []struct {
		filter string
		want   int64
	}{
		{"payload decodes", 6},
		{"payload does not decode", 4},
		{"not payload decodes", 4},
		{"payload decodes or payload does not decode", 10},
		{"payload does not decode and payload~^not", 4},
	} {
		e, err := expr.Parse(tc.filter, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		res, err := triage.Scan(ctx, cl, triage.ScanOptions{Topic: dlq, Filter: e})
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		if res.Stats.Letters != tc.want || int64(len(res.Matches)) != tc.want {
			t.Errorf("%s: %d letters (%d matches), want %d", tc.filter, res.Stats.Letters, len(res.Matches), tc.want)
		}
	}
}

// TestScanCannotTell: a scan whose filter asks what cannot be told of a letter (a schema
// letterbox does not decode) ends with the reason, instead of counting the letter out.
func TestScanCannotTell(t *testing.T) {
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	cl := env.Client(t)
	dlq := ns + "things-sub-DLQ"
	if err := env.Admin.CreateSchema(ctx, dlq, "PROTOBUF", orderAvro, nil); err != nil {
		t.Fatal(err)
	}
	fill(t, cl, dlq, "sub", 3)
	e, err := expr.Parse("payload does not decode", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	_, err = triage.Scan(ctx, cl, triage.ScanOptions{Topic: dlq, Filter: e})
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("scan: %v, want the reason it cannot tell", err)
	}
	t.Log(err)
	// What does not ask for decoding still counts.
	e, _ = expr.Parse("payload is json", time.Now())
	if res, err := triage.Scan(ctx, cl, triage.ScanOptions{Topic: dlq, Filter: e}); err != nil || res.Stats.Letters != 3 {
		t.Fatalf("payload is json: %v, %v", res, err)
	}
}

// TestScanCausesOfLettersThatDoNotDecode: 10 of the 25 letters of an Avro topic's DLQ do not
// decode with the schema they were written with; the causes name them in one group with the
// decoder's error, whose expression selects exactly them.
func TestScanCausesOfLettersThatDoNotDecode(t *testing.T) {
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	dlq := avroDLQ(t, env, ctx, 25)
	cl := env.Client(t)
	res, err := triage.Scan(ctx, cl, triage.ScanOptions{Topic: dlq, Facets: true, Admin: env.Admin})
	if err != nil {
		t.Fatal(err)
	}
	split := res.Facets.Causes()
	var fails *triage.Cause
	for i, g := range split.Groups {
		if strings.HasPrefix(g.Label, "does not decode: ") {
			fails = &split.Groups[i]
		}
	}
	for _, g := range split.Groups {
		t.Logf("%4d  %s  [%s]", g.Letters, g.Label, g.Expr)
	}
	if fails == nil || fails.Letters != 10 {
		t.Fatalf("groups %+v: want one of 10 letters that does not decode, named with the error", split.Groups)
	}
	e, err := expr.Parse(fails.Expr, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	check, err := triage.Scan(ctx, cl, triage.ScanOptions{Topic: dlq, Filter: e, Admin: env.Admin})
	if err != nil {
		t.Fatal(err)
	}
	if check.Stats.Letters != 10 {
		t.Errorf("%s selects %d letters, want the group's 10", fails.Expr, check.Stats.Letters)
	}
	var decodes triage.FacetSummary
	for _, s := range res.Facets.Summary() {
		if s.Name == triage.FacetSchema {
			decodes = s
		}
	}
	if len(decodes.Errors) == 0 || decodes.Errors[0].N != 10 {
		t.Errorf("payload.decodes facet %+v: want the decoder's error counted for 10 letters", decodes)
	}
}
