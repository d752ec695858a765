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
