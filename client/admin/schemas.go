package admin

import (
	"context"
	"encoding/binary"
	"strconv"

	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// Schemas of a topic: read, register, delete, and the version a definition has or would
// have (upstream's Schemas admin API).

func schemaPath(t naming.Topic, more ...string) []string {
	return append(path("schemas", esc(t.Tenant), esc(t.Namespace), esc(t.Local)), more...)
}

// Schema returns a topic's latest schema; version >= 0 asks for that version.
func (c *Client) Schema(ctx context.Context, topic string, version int64) (adminapi.GetSchemaResponse, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return adminapi.GetSchemaResponse{}, err
	}
	p := schemaPath(t, "schema")
	if version >= 0 {
		p = append(p, strconv.FormatInt(version, 10))
	}
	var out adminapi.GetSchemaResponse
	_, err = c.call(ctx, request{method: "GET", path: p}, &out)
	return out, err
}

// Schemas returns every version of a topic's schema.
func (c *Client) Schemas(ctx context.Context, topic string) ([]adminapi.GetSchemaResponse, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return nil, err
	}
	var out adminapi.GetAllVersionsSchemaResponse
	_, err = c.call(ctx, request{method: "GET", path: schemaPath(t, "schemas")}, &out)
	return out.GetSchemaResponses, err
}

// CreateSchema registers a schema (type as upstream names it, definition, properties).
func (c *Client) CreateSchema(ctx context.Context, topic, typ, definition string, props map[string]string) error {
	t, err := ParseTopic(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "POST", path: schemaPath(t, "schema"), body: schemaPayload(typ, definition, props)}, nil)
	return err
}

// schemaPayload is the body that registers, looks up or checks a schema; properties are
// written {} rather than null when there are none.
func schemaPayload(typ, definition string, props map[string]string) adminapi.PostSchemaPayload {
	if props == nil {
		props = map[string]string{}
	}
	return adminapi.PostSchemaPayload{Type: typ, Schema: definition, Properties: props}
}

// DeleteSchema deletes a topic's schema.
func (c *Client) DeleteSchema(ctx context.Context, topic string) error {
	t, err := ParseTopic(topic)
	if err != nil {
		return err
	}
	_, err = c.call(ctx, request{method: "DELETE", path: schemaPath(t, "schema"), query: forceQ(false)}, nil)
	return err
}

// SchemaVersionBytes encodes a schema version as the binary protocol carries it.
func SchemaVersionBytes(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

// Schema queries that take a schema in the request: which version a schema is, and whether
// one could be registered.

// SchemaVersionOf returns the version under which a topic registered the schema (type as
// upstream names it, definition, properties); 404 (IsNotFound) if it never did.
func (c *Client) SchemaVersionOf(ctx context.Context, topic, typ, definition string, props map[string]string) (int64, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return 0, err
	}
	var out adminapi.LongSchemaVersion
	_, err = c.call(ctx, request{method: "POST", path: schemaPath(t, "version"), body: schemaPayload(typ, definition, props)}, &out)
	return out.Version, err
}

// SchemaCompatibility checks, without registering it, whether a schema could be registered
// on a topic under its namespace's strategy.
func (c *Client) SchemaCompatibility(ctx context.Context, topic, typ, definition string, props map[string]string) (adminapi.IsCompatibilityResponse, error) {
	t, err := ParseTopic(topic)
	if err != nil {
		return adminapi.IsCompatibilityResponse{}, err
	}
	var out adminapi.IsCompatibilityResponse
	_, err = c.call(ctx, request{method: "POST", path: schemaPath(t, "compatibility"), body: schemaPayload(typ, definition, props)}, &out)
	return out, err
}
