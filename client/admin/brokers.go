package admin

import (
	"context"
	"fmt"
	"strings"
)

// Brokers (upstream's Brokers admin API): the active brokers of a cluster, and the broker
// itself: its health check and its Prometheus metrics.

// ActiveBrokers lists a cluster's active brokers by their web service address (host:port).
func (c *Client) ActiveBrokers(ctx context.Context, cluster string) ([]string, error) {
	var out []string
	_, err := c.call(ctx, request{method: "GET", path: path("brokers", esc(cluster))}, &out)
	return out, err
}

// Health runs the broker's health check: nil when it answers "ok". Upstream's check also
// produces and consumes a message on a heartbeat topic, so it can take a moment.
func (c *Client) Health(ctx context.Context) error {
	text, err := c.text(ctx, request{method: "GET", path: path("brokers", "health")})
	if err != nil {
		return err
	}
	if s := strings.Trim(strings.TrimSpace(text), `"`); !strings.EqualFold(s, "ok") {
		return fmt.Errorf("admin: health check answered %q", s)
	}
	return nil
}

// Metrics returns the broker's metrics in Prometheus text exposition format, as served on
// /metrics (beside the admin API, not under it).
func (c *Client) Metrics(ctx context.Context) (string, error) {
	return c.text(ctx, request{method: "GET", path: []string{"metrics"}, accept: "text/plain; version=0.0.4"})
}
