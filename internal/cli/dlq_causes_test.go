package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// RouteIncident (exported for the end-to-end tests of package cli_test) has the official Go client's dead-letter router (batching) fill
// orders-billing-DLQ with the incident of issue 30 at 9,900 letters: 8,900 of region eu whose
// downstream was down, 900 of other regions with an empty or UNKNOWN key, 100 of other
// regions whose payload is not JSON.
func RouteIncident(t *testing.T, env *brokertest.Env) {
	t.Helper()
	others := []string{"us-east", "us-west", "ap-south", "ap-east", "sa", "af", "me", "ca"}
	env.RouteDeadLetters(t, brokertest.Route{Origin: dlqNS + "orders", Subscription: "billing", DLQ: dlqNS + "orders-billing-DLQ",
		InitialSubscription: "billing-keep", N: 9900, Message: func(i int) *pulsar.ProducerMessage {
			m := &pulsar.ProducerMessage{Key: fmt.Sprintf("order-%d", i), Payload: fmt.Appendf(nil, `{"order":%d,"sku":"A-1"}`, i),
				Properties: map[string]string{"region": "eu", "tenant": []string{"acme", "globex"}[i%2]}}
			switch {
			case i%99 == 7: // 100; i%11 is 7 for these, so no key below is theirs
				m.Payload = []byte("<xml>not json</xml>")
				m.Properties["region"] = others[i%len(others)]
			case i%11 == 3: // 900
				m.Key = []string{"", "UNKNOWN"}[i%2]
				m.Properties["region"] = others[i%len(others)]
			}
			return m
		}})
}

// The incident in two commands: dlq causes --json splits it into the three groups, and each
// group's expression, given to dlq stats --filter, counts exactly its letters; dlq stats --by
// counts the facets asked.
func TestDLQCausesOfTheIncident(t *testing.T) {
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, 3*time.Minute)
	RouteIncident(t, env)

	code, out, errOut := runDLQCmd(t, ctx, env, "causes", "orders-billing-DLQ", "--json")
	lines := jsonLines(t, out)
	if code != ExitOK || len(lines) != 1 || lines[0]["complete"] != true || lines[0]["letters"] != 9900.0 {
		t.Fatalf("causes: code %d, stderr %q, stdout %s", code, errOut, out)
	}
	groups, _ := lines[0]["groups"].([]any)
	var got []string
	for _, g := range groups {
		g := g.(map[string]any)
		got = append(got, fmt.Sprintf("%v %v", g["letters"], g["label"]))
	}
	want := []string{"8900 property region=eu", "900 key empty or UNKNOWN", "100 payload not JSON"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("groups %q, want %q\n%s", got, want, out)
	}
	if rest := lines[0]["rest"].(map[string]any); rest["letters"] != 0.0 {
		t.Errorf("rest %v, want 0 letters", rest)
	}
	for _, g := range groups {
		g := g.(map[string]any)
		filter := g["expr"].(string)
		if letters, _ := statsLetters(t, ctx, env, "--filter", filter); letters != g["letters"] {
			t.Errorf("stats --filter %q: %v letters, group %v has %v", filter, letters, g["label"], g["letters"])
		}
	}

	code, out, errOut = runDLQCmd(t, ctx, env, "causes", "orders-billing-DLQ")
	for _, line := range []string{"9900 letters in orders-billing-DLQ (subscription billing-keep), 3 causes:",
		"  8900   89.9%  property region=eu", "   900    9.1%  key empty or UNKNOWN", "   100    1.0%  payload not JSON"} {
		if code != ExitOK || !strings.Contains(out, line+"\n") {
			t.Errorf("causes: code %d, no %q in\n%s\nstderr: %s", code, line, out, errOut)
		}
	}

	code, out, errOut = runDLQCmd(t, ctx, env, "stats", "orders-billing-DLQ", "--by", "property.region", "--by", "payload.kind")
	if code != ExitOK {
		t.Fatalf("stats --by: code %d, stderr %q", code, errOut)
	}
	for _, line := range []string{"by property.region (9 distinct)", "8900   89.9%  eu", "by payload.kind (2 distinct)",
		"9800   99.0%  json      payload is json", "100    1.0%  not json  payload is not json and size>0"} {
		if !strings.Contains(out, line) {
			t.Errorf("stats --by: no %q in\n%s", line, out)
		}
	}
}
