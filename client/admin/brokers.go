package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Brokers (upstream's Brokers admin API): the active brokers of a cluster (those of the admin
// URL's own cluster are hosts of the cluster, learn.go), and the broker itself: its health
// check and its Prometheus metrics.

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

// ErrUntrustedAnswer is the error of ClusterBrokers when the list came from a host that is
// not one of the cluster's (the admin URL redirected the call elsewhere): it is not used.
var ErrUntrustedAnswer = errors.New("admin: answered by a host that is not the cluster's")

func isUntrustedAnswer(err error) bool { return errors.Is(err, ErrUntrustedAnswer) }

// ClusterBrokers lists the active brokers of the admin URL's own cluster by their web service
// address (host:port) — upstream's GET /admin/v2/brokers; a broker without that route answers
// for its one cluster at /admin/v2/brokers/{cluster} — and trusts each as a host of the
// cluster, to which credentials may follow a redirect, when a host of the cluster gave the
// answer (not a host a redirect led to, nor http after an https admin URL). Upstream lists
// brokers to superusers only.
func (c *Client) ClusterBrokers(ctx context.Context) ([]string, error) {
	ids, from, err := c.brokerList(ctx, path("brokers"))
	var ae *Error
	if errors.As(err, &ae) && ae.Withheld != "" {
		// A redirect led elsewhere: whatever answered is not the cluster.
		return nil, fmt.Errorf("%w: %s", ErrUntrustedAnswer, ae.Withheld)
	}
	if s := StatusOf(err); s == http.StatusNotFound || s == http.StatusMethodNotAllowed {
		var clusters []string
		if _, cerr := c.call(ctx, request{method: "GET", path: path("clusters")}, &clusters); cerr != nil {
			return nil, cerr
		}
		if len(clusters) != 1 {
			return nil, fmt.Errorf("admin: the admin URL lists no brokers of its own cluster, and %d clusters: which is its own is not known", len(clusters))
		}
		ids, from, err = c.brokerList(ctx, path("brokers", esc(clusters[0])))
	}
	if err != nil {
		return nil, err
	}
	if !c.answeredByCluster(from) {
		return nil, fmt.Errorf("%w: the broker list came from %s", ErrUntrustedAnswer, from.Host)
	}
	for _, id := range ids {
		if err := c.TrustHost(c.BrokerURL(id)); err != nil {
			return nil, fmt.Errorf("admin: the broker list names %q: %w", id, err)
		}
	}
	return ids, nil
}

// brokerList reads a list of brokers at p, and the URL that answered it.
func (c *Client) brokerList(ctx context.Context, p []string) ([]string, *url.URL, error) {
	resp, cancel, err := c.do(ctx, request{method: "GET", path: p})
	if err != nil {
		return nil, nil, err
	}
	defer cancel()
	defer resp.Body.Close()
	var ids []string
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&ids); err != nil {
		return nil, nil, fmt.Errorf("admin: decode response of %s: %w", strings.Join(p, "/"), err)
	}
	return ids, resp.Request.URL, nil
}

// BrokerURL is the web URL of the broker upstream names id (its host:port), in the admin
// URL's scheme. A broker that names itself by an unspecified address (it listens on every
// interface) is reached at the admin URL's host.
func (c *Client) BrokerURL(id string) string {
	host, port, err := net.SplitHostPort(id)
	if err == nil {
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			id = net.JoinHostPort(c.base.Hostname(), port)
		}
	}
	return c.base.Scheme + "://" + id
}

// RuntimeConfiguration is the configuration the broker runs with, key → value as text, with
// upstream's keys (GET brokers/configuration/runtime). Upstream answers superusers only.
func (c *Client) RuntimeConfiguration(ctx context.Context) (map[string]string, error) {
	var out map[string]string
	_, err := c.call(ctx, request{method: "GET", path: path("brokers", "configuration", "runtime")}, &out)
	return out, err
}
