package triage_test

import (
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/triage"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

// TestVerdictOne: the verdict on one topic is Classify's on it, sampling only that topic.
func TestVerdictOne(t *testing.T) {
	env := pulsartest.Start(t)
	officialLetters(t, env)
	ctx := brokertest.Ctx(t, 30*time.Second)
	topics := listing(t, ctx, env.Admin())
	var known []string
	for _, tp := range topics {
		known = append(known, tp.Name)
	}
	want := triage.NewFinder(env.Admin()).Classify(ctx, topics)
	for _, name := range []string{ns + "orders", ns + "x-DLQ", ns + "orders-dlq", ns + "payments.retry"} {
		got := triage.NewFinder(env.Admin()).Verdict(ctx, triage.Topic{Name: name, InCounter: -1}, known)
		if got != want[name] {
			t.Errorf("%s: %+v, want %+v", name, got, want[name])
		}
	}
	if v := triage.NewFinder(env.Admin()).Verdict(ctx, triage.Topic{Name: ns + "orders-dlq", InCounter: -1}, known); v.Kind != deadletter.DeadLetter {
		t.Errorf("orders-dlq: %+v", v)
	}
}
