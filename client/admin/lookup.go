package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Topic lookup: which broker serves a topic; the brokers it names become trusted hosts.

// Lookup returns where a topic is served.
func (c *Client) Lookup(ctx context.Context, topic string) (adminapi.LookupData, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return adminapi.LookupData{}, err
	}
	resp, cancel, err := c.do(ctx, request{method: "GET", path: []string{"lookup", "v2", "topic", t.Domain(), esc(t.Tenant), esc(t.Namespace), esc(t.Local)}})
	if err != nil {
		return adminapi.LookupData{}, err
	}
	defer cancel()
	defer resp.Body.Close()
	var out adminapi.LookupData
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil {
		return adminapi.LookupData{}, fmt.Errorf("admin: decode response of lookup %s: %w", topic, err)
	}
	c.trustLookup(resp.Request.URL, out)
	return out, nil
}

// trustLookup trusts the broker a lookup named (its web URLs) when a host of the cluster gave
// the answer, over https unless the admin URL itself is http: the owner of a topic is a host
// of the cluster, to which the credentials may follow the redirects of later calls.
func (c *Client) trustLookup(from *url.URL, l adminapi.LookupData) {
	if !c.answeredByCluster(from) {
		return
	}
	for _, u := range []string{l.HTTPURL, l.HTTPURLTLS} {
		if u != "" {
			c.TrustHost(u) // an unparsable URL is not trusted, and the lookup still answers
		}
	}
}
