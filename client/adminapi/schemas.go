package adminapi

// GetSchemaResponse is upstream's GetSchemaResponse: one version of a topic's schema, its
// definition as text (for KEY_VALUE, upstream's JSON of the two schemas).
type GetSchemaResponse struct {
	Version    int64             `json:"version"`
	Type       string            `json:"type"`
	Timestamp  int64             `json:"timestamp"`
	Data       string            `json:"data"`
	Properties map[string]string `json:"properties"`
}

// IsCompatibilityResponse is upstream's IsCompatibilityResponse: whether a schema could be
// registered, and the strategy that decided.
type IsCompatibilityResponse struct {
	Compatible bool   `json:"compatibility"`
	Strategy   string `json:"schemaCompatibilityStrategy"`
}

// GetAllVersionsSchemaResponse is upstream's GetAllVersionsSchemaResponse: every version of a
// topic's schema, oldest first.
type GetAllVersionsSchemaResponse struct {
	GetSchemaResponses []GetSchemaResponse `json:"getSchemaResponses"`
}

// PostSchemaPayload is upstream's PostSchemaPayload: a schema to register, or to look up or
// check (type as upstream names it, definition as text).
type PostSchemaPayload struct {
	Type       string            `json:"type"`
	Schema     string            `json:"schema"`
	Properties map[string]string `json:"properties"`
}

// LongSchemaVersion is upstream's LongSchemaVersion: a schema's version as the admin API
// writes it.
type LongSchemaVersion struct {
	Version int64 `json:"version"`
}

// PostSchemaResponse is upstream's PostSchemaResponse: the version a registered schema has.
type PostSchemaResponse struct {
	Version LongSchemaVersion `json:"version"`
}

// DeleteSchemaResponse is upstream's DeleteSchemaResponse.
type DeleteSchemaResponse struct {
	Version int64 `json:"version"`
}
