package admin

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/wire"
)

var v2 = []string{"admin", "v2"}

func path(parts ...string) []string { return append(append([]string{}, v2...), parts...) }

func esc(s string) string { return url.PathEscape(s) }

// Clusters lists the cluster names.
func (c *Client) Clusters(ctx context.Context) ([]string, error) {
	var out []string
	_, err := c.call(ctx, request{method: "GET", path: path("clusters")}, &out)
	return out, err
}

// Tenants lists the tenants.
func (c *Client) Tenants(ctx context.Context) ([]string, error) {
	var out []string
	_, err := c.call(ctx, request{method: "GET", path: path("tenants")}, &out)
	return out, err
}

// Tenant returns a tenant's configuration.
func (c *Client) Tenant(ctx context.Context, name string) (TenantInfo, error) {
	var out TenantInfo
	_, err := c.call(ctx, request{method: "GET", path: path("tenants", esc(name))}, &out)
	return out, err
}

// CreateTenant creates a tenant.
func (c *Client) CreateTenant(ctx context.Context, name string, info TenantInfo) error {
	_, err := c.call(ctx, request{method: "PUT", path: path("tenants", esc(name)), body: info}, nil)
	return err
}

// UpdateTenant replaces a tenant's configuration.
func (c *Client) UpdateTenant(ctx context.Context, name string, info TenantInfo) error {
	_, err := c.call(ctx, request{method: "POST", path: path("tenants", esc(name)), body: info}, nil)
	return err
}

// DeleteTenant deletes a tenant (force: with its namespaces).
func (c *Client) DeleteTenant(ctx context.Context, name string, force bool) error {
	_, err := c.call(ctx, request{method: "DELETE", path: path("tenants", esc(name)), query: forceQ(force)}, nil)
	return err
}

func forceQ(force bool) url.Values { return url.Values{"force": {strconv.FormatBool(force)}} }

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
func (c *Client) NamespacePolicies(ctx context.Context, ns string) (Policies, error) {
	var out Policies
	p, err := nsPath(ns)
	if err != nil {
		return out, err
	}
	_, err = c.call(ctx, request{method: "GET", path: p}, &out)
	return out, err
}

// SetRetention sets a namespace's retention.
func (c *Client) SetRetention(ctx context.Context, ns string, r RetentionPolicies) error {
	p, err := nsPath(ns, "retention")
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "POST", path: p, body: r}, nil)
	return err
}

// SetAutoTopicCreation sets a namespace's auto topic creation override.
func (c *Client) SetAutoTopicCreation(ctx context.Context, ns string, a AutoTopicCreation) error {
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

// Topics lists a namespace's topics in one domain: non-partitioned topics and partitions.
func (c *Client) Topics(ctx context.Context, ns string, persistent bool) ([]string, error) {
	return c.topicList(ctx, ns, persistent, false)
}

// PartitionedTopics lists a namespace's partitioned topics (base names) in one domain.
func (c *Client) PartitionedTopics(ctx context.Context, ns string, persistent bool) ([]string, error) {
	return c.topicList(ctx, ns, persistent, true)
}

func (c *Client) topicList(ctx context.Context, ns string, persistent, partitioned bool) ([]string, error) {
	tenant, local, ok := strings.Cut(ns, "/")
	if !ok {
		return nil, fmt.Errorf("admin: invalid namespace %q", ns)
	}
	domain := "non-persistent"
	if persistent {
		domain = "persistent"
	}
	p := path(domain, esc(tenant), esc(local))
	if partitioned {
		p = append(p, "partitioned")
	}
	out := []string{}
	_, err := c.call(ctx, request{method: "GET", path: p}, &out)
	return out, err
}

func topicOf(name string) (TopicName, error) { return ParseTopic(name) }

// CreateTopic creates a non-partitioned topic (partitions == 0) or a partitioned one, with
// properties (may be nil).
func (c *Client) CreateTopic(ctx context.Context, topic string, partitions int, props map[string]string) error {
	t, err := topicOf(topic)
	if err != nil {
		return err
	}
	if partitions == 0 {
		_, err = c.call(ctx, request{method: "PUT", path: t.path(), body: nullable(props)}, nil)
		return err
	}
	body := struct {
		Partitions int               `json:"partitions"`
		Properties map[string]string `json:"properties"`
	}{partitions, props}
	_, err = c.call(ctx, request{method: "PUT", path: t.path("partitions"), body: body,
		contentType: "application/vnd.partitioned-topic-metadata+json"}, nil)
	return err
}

// nullable sends JSON null for a nil map, as upstream's admin clients do.
func nullable(m map[string]string) any {
	if m == nil {
		return json.RawMessage("null")
	}
	return m
}

// DeleteTopic deletes a topic; partitioned says it is a partitioned topic (all partitions).
func (c *Client) DeleteTopic(ctx context.Context, topic string, partitioned, force bool) error {
	t, err := topicOf(topic)
	if err != nil {
		return err
	}
	p := t.path()
	if partitioned {
		p = t.path("partitions")
	}
	_, err = c.call(ctx, request{method: "DELETE", path: p, query: forceQ(force)}, nil)
	return err
}

// Partitions returns a topic's partition count (0: not partitioned).
func (c *Client) Partitions(ctx context.Context, topic string) (int, error) {
	t, err := topicOf(topic)
	if err != nil {
		return 0, err
	}
	var out struct {
		Partitions int `json:"partitions"`
	}
	_, err = c.call(ctx, request{method: "GET", path: t.path("partitions")}, &out)
	return out.Partitions, err
}

// UpdatePartitions raises a partitioned topic's partition count.
func (c *Client) UpdatePartitions(ctx context.Context, topic string, n int) error {
	t, err := topicOf(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "POST", path: t.path("partitions"), body: n}, nil)
	return err
}

// TopicProperties returns a topic's properties.
func (c *Client) TopicProperties(ctx context.Context, topic string) (map[string]string, error) {
	t, err := topicOf(topic)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	_, err = c.call(ctx, request{method: "GET", path: t.path("properties")}, &out)
	return out, err
}

// UpdateTopicProperties merges props into a topic's properties.
func (c *Client) UpdateTopicProperties(ctx context.Context, topic string, props map[string]string) error {
	t, err := topicOf(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "PUT", path: t.path("properties"), body: props}, nil)
	return err
}

// LastMessageID returns the id of a topic's last message.
func (c *Client) LastMessageID(ctx context.Context, topic string) (MessageID, error) {
	t, err := topicOf(topic)
	if err != nil {
		return MessageID{}, err
	}
	var out MessageID
	_, err = c.call(ctx, request{method: "GET", path: t.path("lastMessageId")}, &out)
	return out, err
}

// Stats returns a non-partitioned topic's (or a partition's) stats.
func (c *Client) Stats(ctx context.Context, topic string) (TopicStats, error) {
	t, err := topicOf(topic)
	if err != nil {
		return TopicStats{}, err
	}
	var out TopicStats
	_, err = c.call(ctx, request{method: "GET", path: t.path("stats")}, &out)
	return out, err
}

// PartitionedStats returns a partitioned topic's stats, per partition when perPartition.
func (c *Client) PartitionedStats(ctx context.Context, topic string, perPartition bool) (PartitionedTopicStats, error) {
	t, err := topicOf(topic)
	if err != nil {
		return PartitionedTopicStats{}, err
	}
	var out PartitionedTopicStats
	_, err = c.call(ctx, request{method: "GET", path: t.path("partitioned-stats"),
		query: url.Values{"perPartition": {strconv.FormatBool(perPartition)}}}, &out)
	return out, err
}

// BrokerTopicStats returns every topic's stats in one call (upstream's broker-stats/topics),
// flattened to topic name → stats.
func (c *Client) BrokerTopicStats(ctx context.Context) (map[string]TopicStats, error) {
	var raw map[string]map[string]map[string]map[string]TopicStats
	if _, err := c.call(ctx, request{method: "GET", path: path("broker-stats", "topics")}, &raw); err != nil {
		return nil, err
	}
	out := map[string]TopicStats{}
	for _, bundles := range raw {
		for _, domains := range bundles {
			for _, topics := range domains {
				for name, st := range topics {
					out[name] = st
				}
			}
		}
	}
	return out, nil
}

// Lookup returns where a topic is served.
func (c *Client) Lookup(ctx context.Context, topic string) (Lookup, error) {
	t, err := topicOf(topic)
	if err != nil {
		return Lookup{}, err
	}
	resp, cancel, err := c.do(ctx, request{method: "GET", path: []string{"lookup", "v2", "topic", t.domain(), esc(t.Tenant), esc(t.Namespace), esc(t.Local)}})
	if err != nil {
		return Lookup{}, err
	}
	defer cancel()
	defer resp.Body.Close()
	var out Lookup
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out); err != nil {
		return Lookup{}, fmt.Errorf("admin: decode response of lookup %s: %w", topic, err)
	}
	c.trustLookup(resp.Request.URL, out)
	return out, nil
}

// trustLookup trusts the broker a lookup named (its web URLs) when a host of the cluster gave
// the answer, over https unless the admin URL itself is http: the owner of a topic is a host
// of the cluster, to which the credentials may follow the redirects of later calls.
func (c *Client) trustLookup(from *url.URL, l Lookup) {
	if from == nil || !c.trusted.trusts(from) || (c.base.Scheme == "https" && from.Scheme != "https") {
		return
	}
	for _, u := range []string{l.HTTPURL, l.HTTPURLTLS} {
		if u != "" {
			c.TrustHost(u) // an unparsable URL is not trusted, and the lookup still answers
		}
	}
}

// Subscriptions lists a topic's subscriptions.
func (c *Client) Subscriptions(ctx context.Context, topic string) ([]string, error) {
	t, err := topicOf(topic)
	if err != nil {
		return nil, err
	}
	out := []string{}
	_, err = c.call(ctx, request{method: "GET", path: t.path("subscriptions")}, &out)
	return out, err
}

func (c *Client) subCall(ctx context.Context, method, topic, sub string, body any, more ...string) error {
	t, err := topicOf(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: method, path: t.path(append([]string{"subscription", esc(sub)}, more...)...), body: body}, nil)
	return err
}

// CreateSubscription creates a durable subscription starting at id (Earliest, Latest or a
// message id).
func (c *Client) CreateSubscription(ctx context.Context, topic, sub string, id MessageID) error {
	return c.subCall(ctx, "PUT", topic, sub, id)
}

// DeleteSubscription deletes a subscription (force: closing its consumers).
func (c *Client) DeleteSubscription(ctx context.Context, topic, sub string, force bool) error {
	t, err := topicOf(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "DELETE", path: t.path("subscription", esc(sub)), query: forceQ(force)}, nil)
	return err
}

// SkipMessages skips the next n entries of a subscription.
func (c *Client) SkipMessages(ctx context.Context, topic, sub string, n int64) error {
	return c.subCall(ctx, "POST", topic, sub, nil, "skip", strconv.FormatInt(n, 10))
}

// ClearBacklog acknowledges everything in a subscription.
func (c *Client) ClearBacklog(ctx context.Context, topic, sub string) error {
	return c.subCall(ctx, "POST", topic, sub, nil, "skip_all")
}

// ExpireMessages acknowledges messages older than seconds.
func (c *Client) ExpireMessages(ctx context.Context, topic, sub string, seconds int64) error {
	return c.subCall(ctx, "POST", topic, sub, nil, "expireMessages", strconv.FormatInt(seconds, 10))
}

// ResetCursorToTime moves a subscription to the first message published at or after ms.
func (c *Client) ResetCursorToTime(ctx context.Context, topic, sub string, ms int64) error {
	return c.subCall(ctx, "POST", topic, sub, nil, "resetcursor", strconv.FormatInt(ms, 10))
}

// ResetCursorToID moves a subscription so that id is the next message delivered.
func (c *Client) ResetCursorToID(ctx context.Context, topic, sub string, id MessageID) error {
	return c.subCall(ctx, "POST", topic, sub, id, "resetcursor")
}

// Peek returns up to n messages of a subscription's backlog without consuming them (entries
// counted from the first unacknowledged; a batch yields all its messages). Asking for more
// than the backlog holds returns what there is.
func (c *Client) Peek(ctx context.Context, topic, sub string, n int) ([]Message, error) {
	t, err := topicOf(topic)
	if err != nil {
		return nil, err
	}
	var out []Message
	for pos := 1; len(out) < n; pos++ {
		msgs, err := c.entry(ctx, t, t.path("subscription", esc(sub), "position", strconv.Itoa(pos)))
		if IsNotFound(err) && pos > 1 {
			break // the end of the backlog
		}
		if err != nil {
			return out, err
		}
		out = append(out, msgs...)
	}
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}

// PeekAt returns the messages of the entry at position pos (1 is the first unacknowledged) of a
// subscription's backlog, without consuming it: one message, or a batch's messages. Past the
// end of the backlog the server answers 404 (IsNotFound), as it does for a missing topic.
// A subscription that does not exist is created at the earliest position by the broker (as
// upstream's; 412 when automatic subscription creation is off): look first to only read.
func (c *Client) PeekAt(ctx context.Context, topic, sub string, pos int) ([]Message, error) {
	t, err := topicOf(topic)
	if err != nil {
		return nil, err
	}
	if pos < 1 {
		return nil, fmt.Errorf("admin: peek position %d: positions start at 1", pos)
	}
	return c.entry(ctx, t, t.path("subscription", esc(sub), "position", strconv.Itoa(pos)))
}

// MessagesByID returns the messages of the entry ledger:entry.
func (c *Client) MessagesByID(ctx context.Context, topic string, ledger, entry int64) ([]Message, error) {
	t, err := topicOf(topic)
	if err != nil {
		return nil, err
	}
	return c.entry(ctx, t, t.path("ledger", strconv.FormatInt(ledger, 10), "entry", strconv.FormatInt(entry, 10)))
}

// entry fetches one entry and splits a batch into its messages.
func (c *Client) entry(ctx context.Context, t TopicName, p []string) ([]Message, error) {
	return c.entryAt(ctx, t, request{method: "GET", path: p})
}

// entryAt is entry for a request that also carries a query.
func (c *Client) entryAt(ctx context.Context, t TopicName, r request) ([]Message, error) {
	resp, cancel, err := c.do(ctx, r)
	if err != nil {
		return nil, err
	}
	defer cancel()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("admin: read message: %w", err)
	}
	id, err := parseHeaderID(resp.Header.Get("X-Pulsar-Message-ID"))
	if err != nil {
		return nil, err
	}
	id.PartitionIndex = t.PartitionIndex()
	headers := map[string]string{}
	for k := range resp.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-pulsar-") {
			headers[k] = resp.Header.Get(k)
		}
	}
	props := map[string]string{}
	if js := resp.Header.Get("X-Pulsar-PROPERTY"); js != "" {
		json.Unmarshal([]byte(js), &props)
	} else {
		// Older brokers: one header per property, whose case HTTP does not keep; the names the
		// retry and DLQ flows use are upper case.
		for k := range resp.Header {
			if name, ok := strings.CutPrefix(k, "X-Pulsar-Property-"); ok {
				if up := strings.ToUpper(name); upperProperties[up] {
					name = up
				}
				props[name] = resp.Header.Get(k)
			}
		}
	}
	base := Message{Topic: t.String(), ID: id, Properties: props, PublishTime: resp.Header.Get("X-Pulsar-publish-time"),
		Key: resp.Header.Get("X-Pulsar-partition-key"), EventTime: resp.Header.Get("X-Pulsar-event-time"), Headers: headers}
	nb := resp.Header.Get("X-Pulsar-num-batch-message")
	if nb == "" {
		base.ID.BatchIndex = -1
		base.Payload = body
		return []Message{base}, nil
	}
	count, err := strconv.Atoi(nb)
	if err != nil || count < 0 {
		return nil, fmt.Errorf("admin: bad X-Pulsar-num-batch-message %q", nb)
	}
	parts, err := wire.ParseBatch(body, count)
	if err != nil {
		return nil, fmt.Errorf("admin: message %d:%d: %w", id.LedgerID, id.EntryID, err)
	}
	out := make([]Message, len(parts))
	for i, bm := range parts {
		m := base
		m.ID.BatchIndex = i
		m.Payload = bm.Payload
		m.Key = bm.Meta.GetPartitionKey()
		m.EventTime = ""
		if et := bm.Meta.GetEventTime(); et > 0 {
			m.EventTime = time.UnixMilli(int64(et)).UTC().Format(headerTime)
		}
		m.Properties = map[string]string{}
		for k, v := range props {
			m.Properties[k] = v
		}
		for _, kv := range bm.Meta.GetProperties() {
			m.Properties[kv.GetKey()] = kv.GetValue()
		}
		out[i] = m
	}
	return out, nil
}

// headerTime is how upstream formats times in X-Pulsar-* headers.
const headerTime = "2006-01-02T15:04:05.000Z"

// upperProperties are the upper-case property names of the retry and DLQ flows.
var upperProperties = map[string]bool{"RECONSUMETIMES": true, "REAL_TOPIC": true, "ORIGIN_MESSAGE_ID": true,
	"ORIGIN_MESSAGE_IDY_TIME": true, "DELAY_TIME": true, "RETRY_TOPIC": true, "EXCEPTION": true}

func parseHeaderID(s string) (MessageID, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 {
		return MessageID{}, fmt.Errorf("admin: bad X-Pulsar-Message-ID %q", s)
	}
	l, err1 := strconv.ParseInt(parts[0], 10, 64)
	e, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil {
		return MessageID{}, fmt.Errorf("admin: bad X-Pulsar-Message-ID %q", s)
	}
	return MessageID{LedgerID: l, EntryID: e}, nil
}

func schemaPath(t TopicName, more ...string) []string {
	return append(path("schemas", esc(t.Tenant), esc(t.Namespace), esc(t.Local)), more...)
}

// Schema returns a topic's latest schema; version >= 0 asks for that version.
func (c *Client) Schema(ctx context.Context, topic string, version int64) (Schema, error) {
	t, err := topicOf(topic)
	if err != nil {
		return Schema{}, err
	}
	p := schemaPath(t, "schema")
	if version >= 0 {
		p = append(p, strconv.FormatInt(version, 10))
	}
	var out Schema
	_, err = c.call(ctx, request{method: "GET", path: p}, &out)
	return out, err
}

// Schemas returns every version of a topic's schema.
func (c *Client) Schemas(ctx context.Context, topic string) ([]Schema, error) {
	t, err := topicOf(topic)
	if err != nil {
		return nil, err
	}
	var out struct {
		Schemas []Schema `json:"getSchemaResponses"`
	}
	_, err = c.call(ctx, request{method: "GET", path: schemaPath(t, "schemas")}, &out)
	return out.Schemas, err
}

// CreateSchema registers a schema (type as upstream names it, definition, properties).
func (c *Client) CreateSchema(ctx context.Context, topic, typ, definition string, props map[string]string) error {
	t, err := topicOf(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "POST", path: schemaPath(t, "schema"), body: schemaPayload(typ, definition, props)}, nil)
	return err
}

// schemaPayload is upstream's PostSchemaPayload.
func schemaPayload(typ, definition string, props map[string]string) any {
	if props == nil {
		props = map[string]string{}
	}
	return map[string]any{"type": typ, "schema": definition, "properties": props}
}

// DeleteSchema deletes a topic's schema.
func (c *Client) DeleteSchema(ctx context.Context, topic string) error {
	t, err := topicOf(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "DELETE", path: schemaPath(t, "schema"), query: forceQ(false)}, nil)
	return err
}

// SchemaVersionBytes encodes a schema version as the binary protocol carries it.
func SchemaVersionBytes(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
