package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"
)

// Bodies as upstream's Jackson reads them: numbers and booleans written as strings, a
// fraction for an integer, unknown fields, the deprecated "limit" of a backlog quota. The
// official Go client's own tests post {"limit": "10240", "policy": "producer_request_hold"}.
func TestJacksonBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.s.URL() + "/admin/v2"
	ns := *mustNS(t, "public/default")
	for _, tc := range []struct {
		name, method, path, body string
	}{
		{"quota limit as a string", "POST", "/namespaces/public/default/backlogQuota", `{"limit": "10240", "policy": "producer_request_hold"}`},
		{"retention as strings, unknown field", "POST", "/namespaces/public/default/retention", `{"retentionTimeInMinutes": "120", "retentionSizeInMB": "64", "comment": "kept"}`},
		{"ttl with a fraction", "POST", "/namespaces/public/default/messageTTL", `30.9`},
		{"deduplication as a string", "POST", "/namespaces/public/default/deduplication", `"true"`},
		{"auto subscription creation as a number", "POST", "/namespaces/public/default/autoSubscriptionCreation", `{"allowAutoSubscriptionCreation": 1}`},
		{"properties as numbers", "PUT", "/namespaces/public/default/properties", `{"replicas": 3, "audited": true}`},
	} {
		resp, body := send(t, tc.method, u+tc.path, "application/json", []byte(tc.body))
		if resp.StatusCode != http.StatusNoContent {
			t.Errorf("%s: %s %s = %d %s, want 204", tc.name, tc.method, tc.path, resp.StatusCode, body)
		}
	}

	quotas, err := e.adm.Namespaces().GetBacklogQuotaMap(ns.String())
	must(t, err)
	if q := quotas[utils.DestinationStorage]; q.LimitSize != 10240 || q.Policy != utils.ProducerRequestHold {
		t.Errorf("backlog quota = %+v, want limitSize 10240 held", q)
	}
	r, err := e.adm.Namespaces().GetRetention(ns.String())
	must(t, err)
	if r.RetentionTimeInMinutes != 120 || r.RetentionSizeInMB != 64 {
		t.Errorf("retention = %+v, want 120 min, 64 MB", r)
	}
	if ttl, err := e.adm.Namespaces().GetNamespaceMessageTTL(ns.String()); err != nil || ttl != 30 {
		t.Errorf("message TTL = %d, %v; want 30 (Jackson truncates a fraction)", ttl, err)
	}
	if resp, body := do(t, "GET", u+"/namespaces/public/default/deduplication"); resp.StatusCode != http.StatusOK || body != "true" {
		t.Errorf("deduplication = %d %s, want true", resp.StatusCode, body)
	}
	props, err := e.adm.Namespaces().GetProperties(ns)
	must(t, err)
	if props["replicas"] != "3" || props["audited"] != "true" {
		t.Errorf("properties = %v, want replicas=3 audited=true", props)
	}

	// Jackson's names are exact: a field in another case is unknown, so ignored.
	resp, body := send(t, "POST", u+"/namespaces/public/default/retention", "application/json",
		[]byte(`{"RETENTIONTIMEINMINUTES": 5, "retentionSizeInMB": 1}`))
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("retention with an unknown field = %d %s", resp.StatusCode, body)
	}
	if r, err = e.adm.Namespaces().GetRetention(ns.String()); err != nil || r.RetentionTimeInMinutes != 0 {
		t.Errorf("retention = %+v, %v; want time 0 (RETENTIONTIMEINMINUTES is not a field)", r, err)
	}

	// What Jackson cannot read stays a 400 naming the field.
	resp, body = send(t, "POST", u+"/namespaces/public/default/backlogQuota", "application/json",
		[]byte(`{"limitSize": "ten", "policy": "producer_request_hold"}`))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "limitSize") {
		t.Errorf("limitSize \"ten\" = %d %s, want 400 naming limitSize", resp.StatusCode, body)
	}
}
