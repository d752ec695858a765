package admin

import (
	"context"
)

// Clusters (upstream's Clusters admin API).

// Clusters lists the cluster names.
func (c *Client) Clusters(ctx context.Context) ([]string, error) {
	var out []string
	_, err := c.call(ctx, request{method: "GET", path: path("clusters")}, &out)
	return out, err
}
