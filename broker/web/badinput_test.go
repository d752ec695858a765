package web_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// Bad input never gets a 500: malformed JSON, wrong types, bad names, unknown paths, wrong
// methods and huge bodies are all answered 4xx with upstream's {"reason": ...}, and the broker
// keeps serving.

func send(t *testing.T, method, url, contentType string, body []byte) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp, b.String()
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.s.URL() + "/admin/v2"
	huge := bytes.Repeat([]byte("a"), 5<<20+10)
	for _, tc := range []struct {
		name, method, path, body string
		raw                      []byte
		want                     int
	}{
		{"malformed tenant", "PUT", "/tenants/t1", `{"allowedClusters": [`, nil, 400},
		{"wrong type", "PUT", "/tenants/t1", `{"allowedClusters": "standalone"}`, nil, 400},
		{"trailing garbage", "PUT", "/tenants/t1", `{"allowedClusters": ["standalone"]} x`, nil, 400},
		{"bad tenant name", "PUT", "/tenants/a%20b", `{"allowedClusters": ["standalone"]}`, nil, 412},
		{"bad namespace name", "PUT", "/namespaces/public/a%20b", ``, nil, 412},
		{"namespace policies of wrong type", "PUT", "/namespaces/public/x", `{"bundles": 3}`, nil, 400},
		{"bad retention", "POST", "/namespaces/public/default/retention", `{"retentionTimeInMinutes": "soon"}`, nil, 400},
		{"retention without body", "POST", "/namespaces/public/default/retention", ``, nil, 400},
		{"bad auto topic type", "POST", "/namespaces/public/default/autoTopicCreation", `{"allowAutoTopicCreation": true, "topicType": "weird"}`, nil, 412},
		{"bad strategy", "PUT", "/namespaces/public/default/schemaCompatibilityStrategy", `"SOMETIMES"`, nil, 400},
		{"bad partitions body", "PUT", "/persistent/public/default/p/partitions", `"three"`, nil, 400},
		{"partitions of wrong type", "PUT", "/persistent/public/default/p/partitions", `[3]`, nil, 400},
		{"partition name", "PUT", "/persistent/public/default/x-partition-1/partitions", `2`, nil, 412},
		{"metadata without partitions", "PUT", "/persistent/public/default/p/partitions", `{"properties": {"k": "v"}}`, nil, 400},
		{"metadata with null partitions", "PUT", "/persistent/public/default/p/partitions", `{"partitions": null}`, nil, 400},
		{"metadata with empty partitions", "PUT", "/persistent/public/default/p/partitions", `{"partitions": ""}`, nil, 400},
		{"properties of wrong type", "PUT", "/persistent/public/default/q", `{"a": [1]}`, nil, 400},
		{"bad topic tenant", "GET", "/persistent/a%20b/default/q/stats", ``, nil, 412},
		{"missing topic stats", "GET", "/persistent/public/default/nope/stats", ``, nil, 404},
		{"bad skip count", "POST", "/persistent/public/default/nope/subscription/s/skip/x", ``, nil, 400},
		{"bad force", "DELETE", "/persistent/public/default/nope?force=maybe", ``, nil, 400},
		{"bad reset body", "POST", "/persistent/public/default/nope/subscription/s/resetcursor", `{"ledgerId": "x"}`, nil, 400},
		{"bad schema type", "POST", "/schemas/public/default/q/schema", `{"type": "WHATEVER", "schema": ""}`, nil, 400},
		{"missing schema", "GET", "/schemas/public/default/q/schema", ``, nil, 404},
		{"negative schema version", "GET", "/schemas/public/default/q/schema/-1", ``, nil, 400},
		{"unknown path", "GET", "/persistent/public/default/q/nothing", ``, nil, 404},
		{"wrong method", "PATCH", "/tenants", ``, nil, 405},
		{"wrong method on topic", "POST", "/persistent/public/default/q/stats", ``, nil, 405},
		{"huge body", "PUT", "/tenants/big", ``, huge, 413},
		{"huge properties", "PUT", "/persistent/public/default/big", ``, huge, 413},
	} {
		body := tc.raw
		if body == nil {
			body = []byte(tc.body)
		}
		resp, got := send(t, tc.method, u+tc.path, "application/json", body)
		if resp.StatusCode != tc.want {
			t.Errorf("%s: %s %s = %d %s, want %d", tc.name, tc.method, tc.path, resp.StatusCode, got, tc.want)
			continue
		}
		reason(t, resp, got)
	}
	// Still serving, and nothing was created by the failed requests.
	resp, body := do(t, http.MethodGet, u+"/tenants")
	if resp.StatusCode != 200 || strings.TrimSpace(body) != `["public"]` {
		t.Errorf("tenants after bad input: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, http.MethodGet, u+"/persistent/public/default")
	if resp.StatusCode != 200 || strings.TrimSpace(body) != `[]` {
		t.Errorf("topics after bad input: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, http.MethodGet, u+"/non-persistent/public/default")
	if resp.StatusCode != 200 || strings.TrimSpace(body) != `[]` {
		t.Errorf("non-persistent topics: %d %s", resp.StatusCode, body)
	}
}

func TestPartitionedCreateBothBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u := e.s.URL() + "/admin/v2/persistent/public/default"
	// The Java admin's bare integer, and upstream's metadata form.
	if resp, body := send(t, "PUT", u+"/java/partitions", "application/json", []byte("3")); resp.StatusCode != 204 {
		t.Fatalf("bare count: %d %s", resp.StatusCode, body)
	}
	if resp, body := send(t, "PUT", u+"/meta/partitions", "application/vnd.partitioned-topic-metadata+json",
		[]byte(`{"partitions": 2, "properties": {"k": "v"}}`)); resp.StatusCode != 204 {
		t.Fatalf("metadata form: %d %s", resp.StatusCode, body)
	}
	// A count written as a string, as Jackson reads it.
	if resp, body := send(t, "PUT", u+"/quoted/partitions", "application/vnd.partitioned-topic-metadata+json",
		[]byte(`{"partitions": "4"}`)); resp.StatusCode != 204 {
		t.Fatalf("metadata with a quoted count: %d %s", resp.StatusCode, body)
	}
	if resp, body := do(t, "GET", u+"/quoted/partitions"); resp.StatusCode != 200 || body != `{"partitions":4}` {
		t.Errorf("quoted count's metadata = %d %s, want {\"partitions\":4}", resp.StatusCode, body)
	}
	resp, body := do(t, "GET", u+"/partitioned")
	if resp.StatusCode != 200 || body != `["persistent://public/default/java","persistent://public/default/meta","persistent://public/default/quoted"]` {
		t.Errorf("partitioned list = %s", body)
	}
	resp, body = do(t, "GET", u+"/meta/properties")
	if resp.StatusCode != 200 || body != `{"k":"v"}` {
		t.Errorf("properties = %s", body)
	}
	// Peek on the partitioned base name is refused as upstream does.
	if resp, body := send(t, "PUT", u+"/meta/subscription/s", "application/json", nil); resp.StatusCode != 204 {
		t.Fatalf("create subscription on a partitioned topic: %d %s", resp.StatusCode, body)
	}
	resp, body = do(t, "GET", u+"/meta/subscription/s/position/1")
	if resp.StatusCode != 405 {
		t.Errorf("peek on a partitioned topic = %d %s, want 405", resp.StatusCode, body)
	}
	resp, body = do(t, "GET", u+"/meta-partition-1/subscriptions")
	if resp.StatusCode != 200 || body != `["s"]` {
		t.Errorf("subscriptions of a partition = %d %s", resp.StatusCode, body)
	}
}
