package deadletter

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

const ns = "persistent://public/default/"

func TestClassify(t *testing.T) {
	known := []string{ns + "orders", ns + "orders-billing-DLQ", ns + "x-DLQ", ns + "orders-dlq", ns + "payments"}
	deadLetter := &Sample{Properties: map[string]string{"REAL_TOPIC": ns + "orders-partition-0", "ORIGIN_MESSAGE_ID": "1:2:0"},
		ProducerName: ns + "orders-billing-abcde-xyzzy-DLQ"}
	retried := &Sample{Properties: map[string]string{"REAL_TOPIC": ns + "payments", "RECONSUMETIMES": "2", "DELAY_TIME": "1000"},
		ProducerName: "standalone-0-12", DeliverAt: true}
	plain := &Sample{Properties: map[string]string{"a": "b"}, ProducerName: "p"}
	cases := []struct {
		name string
		e    Evidence
		want Verdict
	}{
		{"name rule", Evidence{Topic: ns + "orders-billing-DLQ", Known: known},
			Verdict{Kind: DeadLetter, Origin: ns + "orders", Subscription: "billing", By: ByName}},
		{"retry by name", Evidence{Topic: ns + "orders-billing-RETRY", Known: known},
			Verdict{Kind: Retry, Origin: ns + "orders", Subscription: "billing", By: ByName}},
		{"purpose", Evidence{Topic: ns + "orders-dlq", Purpose: "dead letter", Known: known, Newest: deadLetter},
			Verdict{Kind: DeadLetter, Origin: ns + "orders", Subscription: "billing", By: ByPurpose}},
		{"standard by purpose, no letters", Evidence{Topic: ns + "x-DLQ", Purpose: "standard", Known: known, Newest: plain},
			Verdict{}},
		{"standard by purpose, empty", Evidence{Topic: ns + "x-DLQ", Purpose: "standard", Known: known}, Verdict{}},
		{"standard by purpose, holds dead letters", Evidence{Topic: ns + "x-DLQ", Purpose: "standard", Known: known, Newest: deadLetter},
			Verdict{Kind: DeadLetter, Origin: ns + "orders", Subscription: "billing", By: BySample}},
		{"custom name, sampled", Evidence{Topic: ns + "orders-dlq", Known: known, Newest: deadLetter},
			Verdict{Kind: DeadLetter, Origin: ns + "orders", Subscription: "billing", By: BySample}},
		{"custom retry, sampled", Evidence{Topic: ns + "payments.retry", Known: known, Newest: retried},
			Verdict{Kind: Retry, Origin: ns + "payments", By: BySample}},
		{"plain topic", Evidence{Topic: ns + "payments", Known: known, Newest: plain}, Verdict{}},
		{"legacy name without origin", Evidence{Topic: ns + "billing-DLQ", Known: known},
			Verdict{Kind: DeadLetter, By: ByName}},
		{"legacy name, sampled", Evidence{Topic: ns + "billing-DLQ", Known: known, Newest: deadLetter},
			Verdict{Kind: DeadLetter, Origin: ns + "orders", Subscription: "billing", By: ByName}},
		{"guessed origin", Evidence{Topic: ns + "a-b-c-DLQ"},
			Verdict{Kind: DeadLetter, Origin: ns + "a-b", Subscription: "c", By: ByName}},
	}
	for _, c := range cases {
		if got := Classify(c.e); got != c.want {
			t.Errorf("%s: Classify = %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestNeedsSample(t *testing.T) {
	known := []string{ns + "orders"}
	for _, c := range []struct {
		topic, purpose string
		want           bool
	}{
		{ns + "orders-billing-DLQ", "", false},
		{ns + "orders-billing-DLQ", "dead letter", false},
		{ns + "orders-dlq", "dead letter", true},
		{ns + "x-DLQ", "standard", true},
		{ns + "a-b-DLQ", "", true},
		{ns + "orders", "", true},
	} {
		if got := NeedsSample(Evidence{Topic: c.topic, Purpose: c.purpose, Known: known}); got != c.want {
			t.Errorf("NeedsSample(%s, %q) = %v", c.topic, c.purpose, got)
		}
	}
}

func TestSampleKind(t *testing.T) {
	for _, c := range []struct {
		s    Sample
		want Kind
	}{
		{Sample{Properties: map[string]string{"REAL_TOPIC": "t"}}, DeadLetter},
		{Sample{Properties: map[string]string{"REAL_TOPIC": "t", "RECONSUMETIMES": "1"}}, Retry},
		{Sample{Properties: map[string]string{"REAL_TOPIC": "t", "RECONSUMETIMES": "17"}, ProducerName: "t-s-c-abcde-DLQ"}, DeadLetter},
	} {
		if got := SampleKind(c.s); got != c.want {
			t.Errorf("SampleKind(%+v) = %v, want %v", c.s, got, c.want)
		}
	}
}

func TestSubscriptionFromProducer(t *testing.T) {
	for _, c := range []struct{ producer, real, want string }{
		{ns + "orders-billing-cons1-abcde-DLQ", ns + "orders-partition-2", "billing"},
		{"orders-billing-cons1-abcde-DLQ", ns + "orders", "billing"},
		{"public/default/orders-billing-team-cons1-abcde-DLQ", ns + "orders", "billing-team"},
		{ns + "orders-partition-2-billing-cons1-abcde-DLQ", ns + "orders-partition-2", "billing"},
		{ns + "orders-billing-DLQ", ns + "orders", "billing"},
		{"my-dlq-producer", ns + "orders", ""},
		{ns + "shipments-billing-cons1-abcde-DLQ", ns + "orders", ""},
	} {
		if got := SubscriptionFromProducer(c.producer, c.real); got != c.want {
			t.Errorf("SubscriptionFromProducer(%q, %q) = %q, want %q", c.producer, c.real, got, c.want)
		}
	}
}

func TestRead(t *testing.T) {
	l := Read(map[string]string{"REAL_TOPIC": ns + "orders-partition-3", "ORIGIN_MESSAGE_IDY_TIME": "1:2:3",
		"RECONSUMETIMES": "4", "Exception": "boom", "error-code": "E1", "REPLAY_COUNT": "2"}, ns+"orders-s-c-abcde-DLQ")
	want := Letter{Origin: ns + "orders", OriginTopic: ns + "orders-partition-3", OriginID: "1:2:3", Subscription: "s",
		Reconsumes: 4, ReasonKey: "error-code", Reason: "E1", ReplayCount: 2}
	if l != want {
		t.Errorf("Read = %+v, want %+v", l, want)
	}
}

func TestReasonOrder(t *testing.T) {
	props := map[string]string{"exception": "E", "app-error": "A", "failure-reason": "F", "Reason": "R", "x": "y"}
	got := Reasons(props)
	want := [][2]string{{"Reason", "R"}, {"failure-reason", "F"}, {"app-error", "A"}, {"exception", "E"}}
	if len(got) != len(want) {
		t.Fatalf("Reasons = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Reasons = %v, want %v", got, want)
		}
	}
	if k, v := Reason(props); k != "Reason" || v != "R" {
		t.Errorf("Reason = %s=%s", k, v)
	}
}

func TestSubscriptionAmong(t *testing.T) {
	producer := ns + "orders-billing-billing-1-abcde-DLQ"
	if got := SubscriptionFromProducer(producer, ns+"orders"); got != "billing-billing" {
		t.Errorf("without the subscriptions: %q (the last dash's guess)", got)
	}
	if got := SubscriptionAmong(producer, ns+"orders", []string{"audit", "billing", "bill"}); got != "billing" {
		t.Errorf("among the origin's subscriptions: %q, want billing", got)
	}
	if got := SubscriptionAmong(producer, ns+"orders", []string{"audit"}); got != "billing-billing" {
		t.Errorf("none matches: %q, want the guess", got)
	}
}

// A Reader reads every letter as Read (and SubscriptionAmong) does, whatever it remembers:
// letters that repeat names, and more distinct names than it remembers.
func TestReaderReadsAsRead(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	names := []string{"REAL_TOPIC", "ORIGIN_MESSAGE_ID", "ORIGIN_MESSAGE_IDY_TIME", "RECONSUMETIMES", "REPLAY_COUNT",
		"REPLAYED_FROM", "reason", "Reason", "failure-reason", "app-error", "Exception", "x", "", "error"}
	values := []string{"", "3", "-1", "x", "1:2:3", ns + "orders", ns + "orders-partition-2", "orders", "bad-partition-"}
	subsOf := func(origin string) []string {
		if origin == ns+"orders" {
			return []string{"billing", "billing-1", "audit"}
		}
		return nil
	}
	for _, subs := range []func(string) []string{nil, subsOf} {
		r := NewReader(subs)
		for i := range 3 * readerMemory {
			props := map[string]string{}
			for range rng.IntN(6) {
				props[names[rng.IntN(len(names))]] = values[rng.IntN(len(values))]
			}
			if rng.IntN(3) == 0 {
				props["reason-"+strconv.Itoa(i)] = "unique" // more names than the Reader remembers
			}
			producer := []string{"", "orders-billing-c-abcde-DLQ", ns + "orders-billing-1-c-abcde-DLQ",
				"orders-partition-2-audit-c-x-abcde-DLQ", "p-" + strconv.Itoa(i) + "-DLQ"}[rng.IntN(5)]
			want := Read(props, producer)
			// Read and Reason are a Reader too: the reason and subscription are also asked of
			// the rules themselves (Reasons sorts by them).
			want.ReasonKey, want.Reason = "", ""
			if rs := Reasons(props); len(rs) > 0 {
				want.ReasonKey, want.Reason = rs[0][0], rs[0][1]
			}
			if want.OriginTopic != "" {
				want.Subscription = SubscriptionFromProducer(producer, want.OriginTopic)
				if subs != nil && want.Origin != "" {
					want.Subscription = SubscriptionAmong(producer, want.OriginTopic, subs(want.Origin))
				}
			}
			if got := r.Read(props, producer); got != want {
				t.Fatalf("letter %d %v from %q: Reader read %+v, Read %+v", i, props, producer, got, want)
			}
		}
		if len(r.ranks) > readerMemory || len(r.subs) > readerMemory || len(r.origins) > readerMemory {
			t.Errorf("the Reader remembers %d names, %d subscriptions, %d origins; at most %d each",
				len(r.ranks), len(r.subs), len(r.origins), readerMemory)
		}
	}
}
