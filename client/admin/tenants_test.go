package admin_test

import (
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

func TestTenantsAndUpdateTenant(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	x := ctx(t)
	must(t, c.CreateTenant(x, "acme", adminapi.TenantInfo{AllowedClusters: []string{"standalone"}}))
	tenants, err := c.Tenants(x)
	must(t, err)
	if !slices.Contains(tenants, "acme") || !slices.Contains(tenants, "public") {
		t.Errorf("tenants = %v", tenants)
	}
	must(t, c.UpdateTenant(x, "acme", adminapi.TenantInfo{AdminRoles: []string{"ops"}, AllowedClusters: []string{"standalone"}}))
	info, err := c.Tenant(x, "acme")
	must(t, err)
	if !reflect.DeepEqual(info, adminapi.TenantInfo{AdminRoles: []string{"ops"}, AllowedClusters: []string{"standalone"}}) {
		t.Errorf("tenant = %+v", info)
	}
	_, err = c.Tenant(x, "nobody")
	wantStatus(t, "missing tenant", err, http.StatusNotFound)
	wantStatus(t, "update of a missing tenant", c.UpdateTenant(x, "nobody", info), http.StatusNotFound)
}
