package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/rest"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Resource groups through pulsaradmin's own REST client (v0.19.0's admin has no ResourceGroups
// yet): created, updated field by field, attached to namespaces, refused where upstream refuses,
// and kept across a restart. Their rates are enforced in broker/resourcegroup_rate_test.go.

func ptr[T any](v T) *T { return &v }

// namespaceGroup is GET …/resourcegroup as upstream's Java admin reads it: the body as it is.
func namespaceGroup(t *testing.T, e *env, ns string) (int, string) {
	t.Helper()
	resp, err := http.Get(e.s.URL() + "/admin/v2/namespaces/" + ns + "/resourcegroup")
	must(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	must(t, err)
	return resp.StatusCode, string(body)
}

func TestPulsarAdminResourceGroups(t *testing.T) {
	dir := t.TempDir()
	start := func() (*env, *rest.Client) {
		store, err := storage.OpenFileStore(dir, storage.FileStoreOptions{})
		must(t, err)
		e := newEnv(t, broker.WithStore(store))
		return e, &rest.Client{ServiceURL: e.s.URL(), HTTPClient: &http.Client{Timeout: 10 * time.Second}}
	}
	e, rc := start()
	const rg = "/admin/v2/resourcegroups"

	var names []string
	must(t, rc.Get(rg, &names))
	if len(names) != 0 {
		t.Fatalf("groups at start: %v", names)
	}
	must(t, rc.Put(rg+"/gold", adminapi.ResourceGroup{PublishRateInMsgs: ptr(100)}))
	var got adminapi.ResourceGroup
	must(t, rc.Get(rg+"/gold", &got))
	want := adminapi.ResourceGroup{PublishRateInMsgs: ptr(100), PublishRateInBytes: ptr[int64](-1), DispatchRateInMsgs: ptr(-1),
		DispatchRateInBytes: ptr[int64](-1), ReplicationDispatchRateInMsgs: ptr[int64](-1), ReplicationDispatchRateInBytes: ptr[int64](-1)}
	if !sameGroup(got, want) {
		t.Errorf("created group = %s, want %s", show(got), show(want))
	}
	// An update sets what it gives and keeps the rest; numbers written as strings are read, as
	// upstream's Jackson reads them.
	must(t, rc.Put(rg+"/gold", map[string]any{"dispatchRateInMsgs": "50", "unknownField": true}))
	must(t, rc.Get(rg+"/gold", &got))
	want.DispatchRateInMsgs = ptr(50)
	if !sameGroup(got, want) {
		t.Errorf("updated group = %s, want %s", show(got), show(want))
	}
	err := rc.Get(rg+"/missing", &got)
	wantStatus(t, "get a missing group", err, 404)
	if err == nil || !strings.Contains(err.Error(), "ResourceGroup does not exist") {
		t.Errorf("get a missing group: %v", err)
	}
	wantStatus(t, "delete a missing group", rc.Delete(rg+"/missing"), 404)

	// Namespaces: a group that does not exist is refused; GET answers the name as upstream's
	// Jersey writes a String, 204 when none.
	nsPath := "/admin/v2/namespaces/public/default/resourcegroup"
	wantStatus(t, "attach a missing group", rc.Post(nsPath+"/missing", nil), 412)
	if code, body := namespaceGroup(t, e, "public/default"); code != http.StatusNoContent {
		t.Errorf("namespace without a group: %d %q, want 204", code, body)
	}
	must(t, rc.Post(nsPath+"/gold", nil))
	if code, body := namespaceGroup(t, e, "public/default"); code != http.StatusOK || body != "gold" {
		t.Errorf("namespace's group: %d %q, want 200 gold", code, body)
	}
	var pol struct {
		ResourceGroupName string `json:"resource_group_name"`
	}
	must(t, rc.Get("/admin/v2/namespaces/public/default", &pol))
	if pol.ResourceGroupName != "gold" {
		t.Errorf("policies' resource_group_name = %q, want gold", pol.ResourceGroupName)
	}
	wantStatus(t, "delete a group in use", rc.Delete(rg+"/gold"), 412)
	err = rc.Get("/admin/v2/namespaces/public/missing/resourcegroup", &got)
	wantStatus(t, "group of a missing namespace", err, 404)

	// Kept across a restart, attachment included.
	must(t, rc.Put(rg+"/silver", adminapi.ResourceGroup{DispatchRateInBytes: ptr[int64](1 << 20)}))
	e.s.Close()
	e.b.Close()
	e, rc = start()
	must(t, rc.Get(rg, &names))
	if !slices.Equal(names, []string{"gold", "silver"}) {
		t.Errorf("groups after a restart: %v", names)
	}
	must(t, rc.Get(rg+"/gold", &got))
	if !sameGroup(got, want) {
		t.Errorf("group after a restart = %s, want %s", show(got), show(want))
	}
	if code, body := namespaceGroup(t, e, "public/default"); code != http.StatusOK || body != "gold" {
		t.Errorf("namespace's group after a restart: %d %q, want 200 gold", code, body)
	}

	must(t, rc.Delete(nsPath))
	if code, body := namespaceGroup(t, e, "public/default"); code != http.StatusNoContent {
		t.Errorf("namespace after detaching: %d %q, want 204", code, body)
	}
	must(t, rc.Delete(rg+"/gold"))
	must(t, rc.Get(rg, &names))
	if !slices.Equal(names, []string{"silver"}) {
		t.Errorf("groups after deleting gold: %v", names)
	}
}

func sameGroup(a, b adminapi.ResourceGroup) bool { return show(a) == show(b) }

func show(g adminapi.ResourceGroup) string {
	data, _ := json.Marshal(g)
	return string(data)
}
