package admin

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Namespaces: listing, creating, deleting, and their policies and permissions (upstream's
// Namespaces admin API).

// Namespaces lists a tenant's namespaces ("tenant/ns").
func (c *Client) Namespaces(ctx context.Context, tenant string) ([]string, error) {
	var out []string
	_, err := c.call(ctx, request{method: "GET", path: path("namespaces", esc(tenant))}, &out)
	return out, err
}

// CreateNamespace creates "tenant/ns" with default policies.
func (c *Client) CreateNamespace(ctx context.Context, ns string) error {
	p, err := nsPath(ns)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "PUT", path: p}, nil)
	return err
}

// DeleteNamespace deletes a namespace (force: with its topics).
func (c *Client) DeleteNamespace(ctx context.Context, ns string, force bool) error {
	p, err := nsPath(ns)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "DELETE", path: p, query: forceQ(force)}, nil)
	return err
}

// NamespacePolicies returns a namespace's policies.
func (c *Client) NamespacePolicies(ctx context.Context, ns string) (adminapi.Policies, error) {
	var out adminapi.Policies
	p, err := nsPath(ns)
	if err != nil {
		return out, err
	}
	_, err = c.call(ctx, request{method: "GET", path: p}, &out)
	return out, err
}

// SetRetention sets a namespace's retention.
func (c *Client) SetRetention(ctx context.Context, ns string, r adminapi.RetentionPolicies) error {
	p, err := nsPath(ns, "retention")
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "POST", path: p, body: r}, nil)
	return err
}

// SetAutoTopicCreation sets a namespace's auto topic creation override.
func (c *Client) SetAutoTopicCreation(ctx context.Context, ns string, a adminapi.AutoTopicCreationOverride) error {
	p, err := nsPath(ns, "autoTopicCreation")
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "POST", path: p, body: a}, nil)
	return err
}

// SetAutoSubscriptionCreation sets a namespace's auto subscription creation override.
func (c *Client) SetAutoSubscriptionCreation(ctx context.Context, ns string, allow bool) error {
	p, err := nsPath(ns, "autoSubscriptionCreation")
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "POST", path: p, body: map[string]bool{"allowAutoSubscriptionCreation": allow}}, nil)
	return err
}

// SetDeduplication turns a namespace's deduplication on or off.
func (c *Client) SetDeduplication(ctx context.Context, ns string, enabled bool) error {
	p, err := nsPath(ns, "deduplication")
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "POST", path: p, body: enabled}, nil)
	return err
}

// SetMessageTTL sets a namespace's message TTL in seconds (0: messages never expire there).
func (c *Client) SetMessageTTL(ctx context.Context, ns string, seconds int) error {
	p, err := nsPath(ns, "messageTTL")
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "POST", path: p, body: seconds}, nil)
	return err
}

// Namespace policies read one at a time, removed, and permissions. A policy that was never set
// answers 204 with no body (upstream's null): the getters return nil for it.

// TopicsMode selects the domains NamespaceTopics lists.
type TopicsMode string

// The modes upstream's namespace topic list accepts; "" leaves the choice to the server
// (persistent topics).
const (
	TopicsPersistent    TopicsMode = "PERSISTENT"
	TopicsNonPersistent TopicsMode = "NON_PERSISTENT"
	TopicsAll           TopicsMode = "ALL"
)

// NamespaceTopics lists a namespace's topics (partitions expanded) in the domains of mode.
func (c *Client) NamespaceTopics(ctx context.Context, ns string, mode TopicsMode) ([]string, error) {
	p, err := nsPath(ns, "topics")
	if err != nil {
		return nil, err
	}
	var q url.Values
	if mode != "" {
		q = url.Values{"mode": {string(mode)}}
	}
	out := []string{}
	_, err = c.call(ctx, request{method: "GET", path: p, query: q}, &out)
	return out, err
}

// policy reads one namespace policy into out; false when it is unset.
func (c *Client) policy(ctx context.Context, ns, name string, out any) (bool, error) {
	p, err := nsPath(ns, name)
	if err != nil {
		return false, err
	}
	return c.call(ctx, request{method: "GET", path: p}, out)
}

// removePolicy unsets one namespace policy: the broker's default applies again.
func (c *Client) removePolicy(ctx context.Context, ns, name string) error {
	p, err := nsPath(ns, name)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "DELETE", path: p}, nil)
	return err
}

// getPolicy reads a policy of type T, nil when unset.
func getPolicy[T any](ctx context.Context, c *Client, ns, name string) (*T, error) {
	var v T
	set, err := c.policy(ctx, ns, name, &v)
	if err != nil || !set {
		return nil, err
	}
	return &v, nil
}

// Retention returns a namespace's retention, nil when unset.
func (c *Client) Retention(ctx context.Context, ns string) (*adminapi.RetentionPolicies, error) {
	return getPolicy[adminapi.RetentionPolicies](ctx, c, ns, "retention")
}

// RemoveRetention unsets a namespace's retention.
func (c *Client) RemoveRetention(ctx context.Context, ns string) error {
	return c.removePolicy(ctx, ns, "retention")
}

// AutoTopicCreation returns a namespace's auto topic creation override, nil when unset.
func (c *Client) AutoTopicCreation(ctx context.Context, ns string) (*adminapi.AutoTopicCreationOverride, error) {
	return getPolicy[adminapi.AutoTopicCreationOverride](ctx, c, ns, "autoTopicCreation")
}

// RemoveAutoTopicCreation unsets a namespace's auto topic creation override.
func (c *Client) RemoveAutoTopicCreation(ctx context.Context, ns string) error {
	return c.removePolicy(ctx, ns, "autoTopicCreation")
}

// AutoSubscriptionCreation returns a namespace's auto subscription creation override, nil
// when unset.
func (c *Client) AutoSubscriptionCreation(ctx context.Context, ns string) (*adminapi.AutoSubscriptionCreationOverride, error) {
	return getPolicy[adminapi.AutoSubscriptionCreationOverride](ctx, c, ns, "autoSubscriptionCreation")
}

// RemoveAutoSubscriptionCreation unsets a namespace's auto subscription creation override.
func (c *Client) RemoveAutoSubscriptionCreation(ctx context.Context, ns string) error {
	return c.removePolicy(ctx, ns, "autoSubscriptionCreation")
}

// Deduplication returns whether a namespace's deduplication is on, nil when unset (the
// broker's default applies).
func (c *Client) Deduplication(ctx context.Context, ns string) (*bool, error) {
	return getPolicy[bool](ctx, c, ns, "deduplication")
}

// RemoveDeduplication unsets a namespace's deduplication.
func (c *Client) RemoveDeduplication(ctx context.Context, ns string) error {
	return c.removePolicy(ctx, ns, "deduplication")
}

// MessageTTL returns a namespace's message TTL in seconds, nil when unset (the broker's
// default applies).
func (c *Client) MessageTTL(ctx context.Context, ns string) (*int, error) {
	return getPolicy[int](ctx, c, ns, "messageTTL")
}

// RemoveMessageTTL unsets a namespace's message TTL.
func (c *Client) RemoveMessageTTL(ctx context.Context, ns string) error {
	return c.removePolicy(ctx, ns, "messageTTL")
}

// SchemaCompatibilityStrategy returns a namespace's schema compatibility strategy as upstream
// names it ("UNDEFINED" when unset: the broker's default applies).
func (c *Client) SchemaCompatibilityStrategy(ctx context.Context, ns string) (string, error) {
	p, err := nsPath(ns, "schemaCompatibilityStrategy")
	if err != nil {
		return "", err
	}
	text, err := c.text(ctx, request{method: "GET", path: p})
	if err != nil {
		return "", err
	}
	// A JSON string; pulsaradmin also tolerates the bare name, and so do we.
	text = strings.TrimSpace(text)
	var s string
	if json.Unmarshal([]byte(text), &s) != nil {
		s = strings.Trim(text, `"`)
	}
	return s, nil
}

// SetSchemaCompatibilityStrategy sets a namespace's schema compatibility strategy (FULL,
// BACKWARD, ALWAYS_COMPATIBLE, …, as upstream names them).
func (c *Client) SetSchemaCompatibilityStrategy(ctx context.Context, ns, strategy string) error {
	p, err := nsPath(ns, "schemaCompatibilityStrategy")
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "PUT", path: p, body: strategy}, nil)
	return err
}

// NamespacePermissions returns the roles granted on a namespace and their actions ("produce",
// "consume", …).
func (c *Client) NamespacePermissions(ctx context.Context, ns string) (map[string][]string, error) {
	p, err := nsPath(ns, "permissions")
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	_, err = c.call(ctx, request{method: "GET", path: p}, &out)
	return out, err
}

// GrantNamespacePermission gives role the actions on a namespace, replacing what it had.
func (c *Client) GrantNamespacePermission(ctx context.Context, ns, role string, actions []string) error {
	p, err := nsPath(ns, "permissions", url.PathEscape(role))
	if err != nil {
		return err
	}
	if actions == nil {
		actions = []string{}
	}
	_, err = c.call(ctx, request{method: "POST", path: p, body: actions}, nil)
	return err
}

// RevokeNamespacePermission removes role's permissions on a namespace.
func (c *Client) RevokeNamespacePermission(ctx context.Context, ns, role string) error {
	p, err := nsPath(ns, "permissions", url.PathEscape(role))
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "DELETE", path: p}, nil)
	return err
}
