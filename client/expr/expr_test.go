package expr

import (
	"errors"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client/deadletter"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func letter() *Message {
	return &Message{
		Key: "customer-27",
		Properties: map[string]string{
			"REAL_TOPIC":        "persistent://public/default/orders-partition-1",
			"ORIGIN_MESSAGE_ID": "5:7:1",
			"RECONSUMETIMES":    "3",
			"reason":            "payment declined",
			"tenant-id":         "acme",
		},
		Payload:      []byte(`{"order":{"id":42,"lines":[{"sku":"A-1"}]},"note":"Rush"}`),
		PublishTime:  now.Add(-90 * time.Minute),
		ProducerName: "persistent://public/default/orders-billing-c0nsm-ab12c-DLQ",
	}
}

func TestMatch(t *testing.T) {
	cases := []struct {
		expr string
		want bool
	}{
		{"", true},
		{"key=customer-27", true},
		{"key = customer-27", true},
		{"key=customer-28", false},
		{"key!=customer-28", true},
		{"key~^customer-\\d+$", true},
		{"key!~customer", false},
		{"property.reason=payment declined", true},
		{`property.reason="payment declined"`, true},
		{"property.reason='payment declined'", true},
		{"property.missing=x", false},
		{"property.missing!=x", true},
		{"property.tenant-id=acme", true},
		{"payload~\"id\":42", true},
		{"payload~nope", false},
		{"json.order.id=42", true},
		{"json.order.lines.0.sku=A-1", true},
		{"json.note=Rush", true},
		{"json.order.missing=1", false},
		{"reason=payment declined", true},
		{`reason="payment declined" and key=customer-27`, true},
		{"reason=payment declined AND key=customer-28", false},
		{"reason=timeout", false},
		{"reason~declined && reconsumes>=3", true},
		{"reconsumes=3", true},
		{"reconsumes<3", false},
		{"origin=orders", true},
		{"origin=public/default/orders", true},
		{"origin=persistent://public/default/orders", true},
		{"origin=shipments", false},
		{"subscription=billing", true},
		{"subscription=billing-c0nsm", false},
		{"subscription!=billing", false},
		{"published>=-2h", true},
		{"published>=-1h", false},
		{"published<-1h", true},
		{"published>=2026-11-30 10:00", true},
		{"published>=2026-11-30T10:31:00Z", false},
		{"published>=2026-11-30 and published<2026-12-01", true},
		{"customer-27", true},
		{"RUSH", true},
		{"acme", true},
		{`"payment declined"`, true},
		{"payment declined", true},
		{"nothing like it", false},
		{"declined and key=customer-27", true},
	}
	letters := deadletter.NewReader(nil) // one for every case, as a reader of a DLQ has
	for _, c := range cases {
		e, err := Parse(c.expr, now)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.expr, err)
			continue
		}
		if got := e.Match(letter()); got != c.want {
			t.Errorf("%q matched %v, want %v", c.expr, got, c.want)
		}
		m := letter()
		m.Letters = letters
		if got := e.Match(m); got != c.want {
			t.Errorf("%q matched %v through a deadletter.Reader, want %v", c.expr, got, c.want)
		}
	}
}

func TestEmptyValues(t *testing.T) {
	for _, c := range []struct {
		expr string
		want bool
	}{{`origin=""`, false}, {`subscription=""`, false}, {`key=""`, false}} {
		e, err := Parse(c.expr, now)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.expr, err)
		}
		if e.Match(letter()) != c.want || !e.Match(&Message{}) {
			t.Errorf("%q should match only messages without the field", c.expr)
		}
	}
}

func TestReasonNone(t *testing.T) {
	e, err := Parse(`reason=""`, now)
	if err != nil {
		t.Fatal(err)
	}
	if e.Match(letter()) || !e.Match(&Message{Properties: map[string]string{"x": "y"}}) {
		t.Error(`reason="" should match only letters without a reason`)
	}
}

func TestPointer(t *testing.T) {
	_, err := Parse("key=a and kye=b", now)
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatal(err)
	}
	if want := "key=a and kye=b\n          ^"; se.Pointer() != want {
		t.Errorf("Pointer() = %q, want %q", se.Pointer(), want)
	}
}

func TestStringRoundTrips(t *testing.T) {
	for _, s := range []string{
		"key=a", `reason="payment declined and more"`, `"a=b"`, "customer-27", `property.x="say \"hi\""`,
		"published>=-2h and reconsumes>1", `key=""`,
	} {
		e, err := Parse(s, now)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		again, err := Parse(e.String(), now)
		if err != nil {
			t.Fatalf("Parse(%q) (from %q): %v", e.String(), s, err)
		}
		if again.String() != e.String() {
			t.Errorf("%q → %q → %q", s, e.String(), again.String())
		}
	}
}

func TestContainsFold(t *testing.T) {
	for _, c := range []struct {
		hay, needle string
		want        bool
	}{{"Hello World", "world", true}, {"abc", "abcd", false}, {"ÉCOLE", "école", true}, {"x", "", true}} {
		if got := containsFold([]byte(c.hay), []byte(c.needle)); got != c.want {
			t.Errorf("containsFold(%q, %q) = %v", c.hay, c.needle, got)
		}
	}
}

// TestSubscriptionWithDashes: a consumer name with a dash makes the producer's name split two
// ways; the subscription it holds still matches.
func TestSubscriptionWithDashes(t *testing.T) {
	m := letter()
	m.ProducerName = "persistent://public/default/orders-billing-billing-1-ab12c-DLQ"
	for _, c := range []struct {
		expr string
		want bool
	}{{"subscription=billing", true}, {"subscription=billing-billing", true}, {"subscription=audit", false}} {
		e, err := Parse(c.expr, now)
		if err != nil {
			t.Fatal(err)
		}
		if e.Match(m) != c.want {
			t.Errorf("%s: %v", c.expr, !c.want)
		}
	}
}
