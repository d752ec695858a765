package admin

import (
	"context"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Tenants (upstream's Tenants admin API).

// Tenants lists the tenants.
func (c *Client) Tenants(ctx context.Context) ([]string, error) {
	var out []string
	_, err := c.call(ctx, request{method: "GET", path: path("tenants")}, &out)
	return out, err
}

// Tenant returns a tenant's configuration.
func (c *Client) Tenant(ctx context.Context, name string) (adminapi.TenantInfo, error) {
	var out adminapi.TenantInfo
	_, err := c.call(ctx, request{method: "GET", path: path("tenants", esc(name))}, &out)
	return out, err
}

// CreateTenant creates a tenant.
func (c *Client) CreateTenant(ctx context.Context, name string, info adminapi.TenantInfo) error {
	_, err := c.call(ctx, request{method: "PUT", path: path("tenants", esc(name)), body: info}, nil)
	return err
}

// UpdateTenant replaces a tenant's configuration.
func (c *Client) UpdateTenant(ctx context.Context, name string, info adminapi.TenantInfo) error {
	_, err := c.call(ctx, request{method: "POST", path: path("tenants", esc(name)), body: info}, nil)
	return err
}

// DeleteTenant deletes a tenant (force: with its namespaces).
func (c *Client) DeleteTenant(ctx context.Context, name string, force bool) error {
	_, err := c.call(ctx, request{method: "DELETE", path: path("tenants", esc(name)), query: forceQ(force)}, nil)
	return err
}
