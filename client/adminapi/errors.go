package adminapi

// ErrorData is upstream's ErrorData, the body of an admin call's error answer.
type ErrorData struct {
	Reason string `json:"reason"`
}
