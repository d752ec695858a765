package replay

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// fillSchemaDLQ publishes n letters with schema s to dlq: payload(i) as written, whether it
// decodes or not.
func (e *env) fillSchemaDLQ(t *testing.T, s client.Schema, n int, payload func(i int) string) {
	t.Helper()
	ctx := brokertest.Ctx(t, 30*time.Second)
	p, err := e.cl.CreateProducer(ctx, client.ProducerOptions{Topic: dlq, InitialSubscriptionName: dsub,
		TopicPurpose: client.TopicPurposeDeadLetter, DisableBatching: true, Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := range n {
		m := deadLetter(origin, i, nil)
		m.Payload = []byte(payload(i))
		if _, err := p.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReplayPayloadDoesNotDecode: a replay selects by "payload does not decode" with the
// schema the letters were written with, as the dry run showed.
func TestReplayPayloadDoesNotDecode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	app := subscribe(t, e.cl, origin, "app")
	e.fillSchemaDLQ(t, client.JSONSchema{Definition: `{"type":"record","name":"N","fields":[{"name":"n","type":"int"}]}`}, 10,
		func(i int) string {
			if i%3 == 0 {
				return fmt.Sprintf(`{"n":%d`, i) // cut short: no JSON
			}
			return fmt.Sprintf(`{"n":%d}`, i)
		})
	f, err := ParseFilter("payload does not decode")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{DLQ: dlq, Subscription: dsub, StateDir: e.state, Selection: Selection{Filters: []Filter{f}}}
	dry := opts
	dry.DryRun = true
	if sum, _, err := collect(brokertest.Ctx(t, 30*time.Second), e.cl, dry); err != nil || !sum.OK() || sum.WouldMove != 4 || sum.Skipped != 6 {
		t.Fatalf("dry run: %+v, %v", sum, err)
	}
	sum, _, err := collect(brokertest.Ctx(t, 30*time.Second), e.cl, opts)
	if err != nil || !sum.OK() || sum.Moved != 4 {
		t.Fatalf("run: %+v, %v", sum, err)
	}
	for _, m := range receiveN(t, app, 4, 200*time.Millisecond) {
		if !strings.HasPrefix(string(m.Payload), `{"n":`) || strings.HasSuffix(string(m.Payload), "}") {
			t.Errorf("moved %q, which decodes", m.Payload)
		}
	}
	if b := e.backlog(t, dlq, dsub); b != 6 {
		t.Errorf("backlog %d, want the 6 letters that decode", b)
	}
}

// TestReplayCannotTellMovesNothing: letters whose decoding cannot be tried (a schema
// letterbox does not decode) are neither moved nor counted unselected: they fail, stay,
// and the run is not OK.
func TestReplayCannotTellMovesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	subscribe(t, e.cl, origin, "app")
	ctx := brokertest.Ctx(t, 30*time.Second)
	if err := e.admin.CreateSchema(ctx, dlq, "PROTOBUF", `{"type":"record","name":"N","fields":[]}`, nil); err != nil {
		t.Fatal(err)
	}
	e.fillDLQ(t, dlq, dsub, 3, func(i int) *client.Message { return deadLetter(origin, i, nil) })
	f, err := ParseFilter("not payload decodes")
	if err != nil {
		t.Fatal(err)
	}
	sum, evs, err := collect(ctx, e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state, Selection: Selection{Filters: []Filter{f}}})
	if err != nil || sum.OK() || sum.Failed != 3 || sum.Moved != 0 || sum.Skipped != 0 {
		t.Fatalf("run: %+v, %v", sum, err)
	}
	if len(evs) == 0 || !strings.Contains(evs[0].Reason, "cannot tell whether it is selected") {
		t.Errorf("events %+v", evs)
	}
	if b := e.backlog(t, dlq, dsub); b != 3 {
		t.Errorf("backlog %d, want 3", b)
	}
}
