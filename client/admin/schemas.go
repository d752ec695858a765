package admin

import "context"

// Schema queries that take a schema in the request: which version a schema is, and whether
// one could be registered.

// SchemaVersionOf returns the version under which a topic registered the schema (type as
// upstream names it, definition, properties); 404 (IsNotFound) if it never did.
func (c *Client) SchemaVersionOf(ctx context.Context, topic, typ, definition string, props map[string]string) (int64, error) {
	t, err := topicOf(topic)
	if err != nil {
		return 0, err
	}
	var out struct {
		Version int64 `json:"version"`
	}
	_, err = c.call(ctx, request{method: "POST", path: schemaPath(t, "version"), body: schemaPayload(typ, definition, props)}, &out)
	return out.Version, err
}

// SchemaCompatibility checks, without registering it, whether a schema could be registered
// on a topic under its namespace's strategy.
func (c *Client) SchemaCompatibility(ctx context.Context, topic, typ, definition string, props map[string]string) (SchemaCompatibility, error) {
	t, err := topicOf(topic)
	if err != nil {
		return SchemaCompatibility{}, err
	}
	var out SchemaCompatibility
	_, err = c.call(ctx, request{method: "POST", path: schemaPath(t, "compatibility"), body: schemaPayload(typ, definition, props)}, &out)
	return out, err
}
