package admin_test

import (
	"errors"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// startNS is start plus a namespace acme/app (tenant acme) to edit.
func startNS(t *testing.T) *admin.Client {
	t.Helper()
	_, c := start(t)
	x := ctx(t)
	must(t, c.CreateTenant(x, "acme", adminapi.TenantInfo{AllowedClusters: []string{"standalone"}}))
	must(t, c.CreateNamespace(x, "acme/app"))
	return c
}

// wantStatus fails unless err is an *Error with status and a reason.
func wantStatus(t *testing.T, what string, err error, status int) {
	t.Helper()
	var e *admin.Error
	if !errors.As(err, &e) || e.Status != status || e.Reason == "" {
		t.Errorf("%s: %v, want HTTP %d with a reason", what, err, status)
	}
}

func TestNamespaceTopics(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	must(t, c.CreateTopic(x, "persistent://acme/app/a", 0, nil))
	must(t, c.CreateTopic(x, "persistent://acme/app/p", 2, nil))
	want := []string{"persistent://acme/app/a", "persistent://acme/app/p-partition-0", "persistent://acme/app/p-partition-1"}
	for _, mode := range []admin.TopicsMode{"", admin.TopicsPersistent, admin.TopicsAll} {
		got, err := c.NamespaceTopics(x, "acme/app", mode)
		must(t, err)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("mode %q: %v, want %v", mode, got, want)
		}
	}
	if got, err := c.NamespaceTopics(x, "acme/app", admin.TopicsNonPersistent); err != nil || len(got) != 0 {
		t.Errorf("non-persistent: %v, %v; want []", got, err)
	}
	_, err := c.NamespaceTopics(x, "acme/none", "")
	wantStatus(t, "missing namespace", err, http.StatusNotFound)
	if _, err := c.NamespaceTopics(x, "acme", ""); err == nil {
		t.Error("namespace without a tenant accepted")
	}
}

func TestRetention(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	if r, err := c.Retention(x, "acme/app"); err != nil || r != nil {
		t.Errorf("unset: %+v, %v; want nil", r, err)
	}
	must(t, c.SetRetention(x, "acme/app", adminapi.RetentionPolicies{RetentionTimeInMinutes: 60, RetentionSizeInMB: 512}))
	r, err := c.Retention(x, "acme/app")
	must(t, err)
	if r == nil || *r != (adminapi.RetentionPolicies{RetentionTimeInMinutes: 60, RetentionSizeInMB: 512}) {
		t.Errorf("retention = %+v", r)
	}
	_, err = c.Retention(x, "acme/none")
	wantStatus(t, "missing namespace", err, http.StatusNotFound)
}

func TestRemoveRetention(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	must(t, c.SetRetention(x, "acme/app", adminapi.RetentionPolicies{RetentionTimeInMinutes: 5}))
	must(t, c.RemoveRetention(x, "acme/app"))
	if r, err := c.Retention(x, "acme/app"); err != nil || r != nil {
		t.Errorf("after removal: %+v, %v; want nil", r, err)
	}
	wantStatus(t, "missing namespace", c.RemoveRetention(x, "acme/none"), http.StatusNotFound)
}

func TestMessageTTL(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	if ttl, err := c.MessageTTL(x, "acme/app"); err != nil || ttl != nil {
		t.Errorf("unset: %v, %v; want nil", ttl, err)
	}
	must(t, c.SetMessageTTL(x, "acme/app", 3600))
	if ttl, err := c.MessageTTL(x, "acme/app"); err != nil || ttl == nil || *ttl != 3600 {
		t.Errorf("TTL = %v, %v; want 3600", ttl, err)
	}
	wantStatus(t, "negative TTL", c.SetMessageTTL(x, "acme/app", -1), http.StatusPreconditionFailed)
	must(t, c.RemoveMessageTTL(x, "acme/app"))
	if ttl, err := c.MessageTTL(x, "acme/app"); err != nil || ttl != nil {
		t.Errorf("after removal: %v, %v; want nil", ttl, err)
	}
	wantStatus(t, "missing namespace", c.SetMessageTTL(x, "acme/none", 60), http.StatusNotFound)
}

func TestAutoTopicCreation(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	if a, err := c.AutoTopicCreation(x, "acme/app"); err != nil || a != nil {
		t.Errorf("unset: %+v, %v; want nil", a, err)
	}
	three := 3
	must(t, c.SetAutoTopicCreation(x, "acme/app", adminapi.AutoTopicCreationOverride{AllowAutoTopicCreation: true, TopicType: "partitioned", DefaultNumPartitions: &three}))
	a, err := c.AutoTopicCreation(x, "acme/app")
	must(t, err)
	if a == nil || !a.AllowAutoTopicCreation || a.TopicType != "partitioned" || a.DefaultNumPartitions == nil || *a.DefaultNumPartitions != 3 {
		t.Errorf("override = %+v", a)
	}
	_, err = c.AutoTopicCreation(x, "acme/none")
	wantStatus(t, "missing namespace", err, http.StatusNotFound)
}

func TestRemoveAutoTopicCreation(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	must(t, c.SetAutoTopicCreation(x, "acme/app", adminapi.AutoTopicCreationOverride{AllowAutoTopicCreation: false, TopicType: "non-partitioned"}))
	must(t, c.RemoveAutoTopicCreation(x, "acme/app"))
	if a, err := c.AutoTopicCreation(x, "acme/app"); err != nil || a != nil {
		t.Errorf("after removal: %+v, %v; want nil", a, err)
	}
	wantStatus(t, "missing namespace", c.RemoveAutoTopicCreation(x, "acme/none"), http.StatusNotFound)
}

func TestAutoSubscriptionCreation(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	if a, err := c.AutoSubscriptionCreation(x, "acme/app"); err != nil || a != nil {
		t.Errorf("unset: %+v, %v; want nil", a, err)
	}
	must(t, c.SetAutoSubscriptionCreation(x, "acme/app", false))
	a, err := c.AutoSubscriptionCreation(x, "acme/app")
	must(t, err)
	if a == nil || a.AllowAutoSubscriptionCreation {
		t.Errorf("override = %+v, want allow=false", a)
	}
	pol, err := c.NamespacePolicies(x, "acme/app")
	must(t, err)
	if pol.AutoSubscriptionCreationOverride == nil || pol.AutoSubscriptionCreationOverride.AllowAutoSubscriptionCreation {
		t.Errorf("policies = %+v", pol.AutoSubscriptionCreationOverride)
	}
	_, err = c.AutoSubscriptionCreation(x, "acme/none")
	wantStatus(t, "missing namespace", err, http.StatusNotFound)
}

func TestRemoveAutoSubscriptionCreation(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	must(t, c.SetAutoSubscriptionCreation(x, "acme/app", true))
	must(t, c.RemoveAutoSubscriptionCreation(x, "acme/app"))
	if a, err := c.AutoSubscriptionCreation(x, "acme/app"); err != nil || a != nil {
		t.Errorf("after removal: %+v, %v; want nil", a, err)
	}
	wantStatus(t, "missing namespace", c.RemoveAutoSubscriptionCreation(x, "acme/none"), http.StatusNotFound)
}

func TestDeduplication(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	if d, err := c.Deduplication(x, "acme/app"); err != nil || d != nil {
		t.Errorf("unset: %v, %v; want nil", d, err)
	}
	for _, on := range []bool{true, false} {
		must(t, c.SetDeduplication(x, "acme/app", on))
		d, err := c.Deduplication(x, "acme/app")
		must(t, err)
		if d == nil || *d != on {
			t.Errorf("after setting %v: %v", on, d)
		}
	}
	_, err := c.Deduplication(x, "acme/none")
	wantStatus(t, "missing namespace", err, http.StatusNotFound)
}

func TestRemoveDeduplication(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	must(t, c.SetDeduplication(x, "acme/app", true))
	must(t, c.RemoveDeduplication(x, "acme/app"))
	if d, err := c.Deduplication(x, "acme/app"); err != nil || d != nil {
		t.Errorf("after removal: %v, %v; want nil", d, err)
	}
	wantStatus(t, "missing namespace", c.RemoveDeduplication(x, "acme/none"), http.StatusNotFound)
}

func TestSchemaCompatibilityStrategy(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	s, err := c.SchemaCompatibilityStrategy(x, "acme/app")
	must(t, err)
	if s != "UNDEFINED" {
		t.Errorf("default strategy = %q, want UNDEFINED", s)
	}
	_, err = c.SchemaCompatibilityStrategy(x, "acme/none")
	wantStatus(t, "missing namespace", err, http.StatusNotFound)
}

func TestSetSchemaCompatibilityStrategy(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	for _, want := range []string{"FULL", "ALWAYS_COMPATIBLE", "BACKWARD_TRANSITIVE"} {
		must(t, c.SetSchemaCompatibilityStrategy(x, "acme/app", want))
		if s, err := c.SchemaCompatibilityStrategy(x, "acme/app"); err != nil || s != want {
			t.Errorf("after setting %s: %q, %v", want, s, err)
		}
	}
	if err := c.SetSchemaCompatibilityStrategy(x, "acme/app", "SOMETIMES"); admin.StatusOf(err) < 400 || admin.StatusOf(err) > 499 {
		t.Errorf("unknown strategy: %v, want a 4xx", err)
	}
	wantStatus(t, "missing namespace", c.SetSchemaCompatibilityStrategy(x, "acme/none", "FULL"), http.StatusNotFound)
}

func TestNamespacePermissions(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	perms, err := c.NamespacePermissions(x, "acme/app")
	must(t, err)
	if len(perms) != 0 {
		t.Errorf("new namespace: %v, want none", perms)
	}
	must(t, c.GrantNamespacePermission(x, "acme/app", "reader", []string{"consume"}))
	perms, err = c.NamespacePermissions(x, "acme/app")
	must(t, err)
	if !reflect.DeepEqual(perms, map[string][]string{"reader": {"consume"}}) {
		t.Errorf("permissions = %v", perms)
	}
	_, err = c.NamespacePermissions(x, "acme/none")
	wantStatus(t, "missing namespace", err, http.StatusNotFound)
}

func TestGrantNamespacePermission(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	must(t, c.GrantNamespacePermission(x, "acme/app", "app-1", []string{"produce", "consume"}))
	must(t, c.GrantNamespacePermission(x, "acme/app", "ops team", []string{"consume"})) // escaped in the path
	perms, err := c.NamespacePermissions(x, "acme/app")
	must(t, err)
	if !reflect.DeepEqual(perms, map[string][]string{"app-1": {"produce", "consume"}, "ops team": {"consume"}}) {
		t.Errorf("permissions = %v", perms)
	}
	wantStatus(t, "unknown action", c.GrantNamespacePermission(x, "acme/app", "app-1", []string{"fly"}), http.StatusBadRequest)
	wantStatus(t, "missing namespace", c.GrantNamespacePermission(x, "acme/none", "app-1", []string{"produce"}), http.StatusNotFound)
}

func TestRevokeNamespacePermission(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	must(t, c.GrantNamespacePermission(x, "acme/app", "app-1", []string{"produce"}))
	must(t, c.GrantNamespacePermission(x, "acme/app", "app-2", []string{"consume"}))
	must(t, c.RevokeNamespacePermission(x, "acme/app", "app-1"))
	perms, err := c.NamespacePermissions(x, "acme/app")
	must(t, err)
	if !reflect.DeepEqual(perms, map[string][]string{"app-2": {"consume"}}) {
		t.Errorf("permissions = %v", perms)
	}
	wantStatus(t, "role without permissions", c.RevokeNamespacePermission(x, "acme/app", "app-1"), http.StatusPreconditionFailed)
	wantStatus(t, "missing namespace", c.RevokeNamespacePermission(x, "acme/none", "app-2"), http.StatusNotFound)
}

func TestNamespaces(t *testing.T) {
	t.Parallel()
	c := startNS(t)
	x := ctx(t)
	must(t, c.CreateNamespace(x, "acme/web"))
	nss, err := c.Namespaces(x, "acme")
	must(t, err)
	slices.Sort(nss)
	if !slices.Equal(nss, []string{"acme/app", "acme/web"}) {
		t.Errorf("namespaces = %v", nss)
	}
	_, err = c.Namespaces(x, "nobody")
	wantStatus(t, "missing tenant", err, http.StatusNotFound)
}
