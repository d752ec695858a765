package adminapi

// ResourceGroup is upstream's ResourceGroup: rates that the topics of every namespace attached
// to the group (a namespace's resource_group_name) share, messages and bytes a second (≤ 0: no
// limit). A field a request leaves out is nil; a stored group has all of them, -1 where its
// creation gave none.
type ResourceGroup struct {
	PublishRateInMsgs   *int   `json:"publishRateInMsgs,omitempty"`
	PublishRateInBytes  *int64 `json:"publishRateInBytes,omitempty"`
	DispatchRateInMsgs  *int   `json:"dispatchRateInMsgs,omitempty"`
	DispatchRateInBytes *int64 `json:"dispatchRateInBytes,omitempty"`
	// The replicators' rates, which limit nothing on a single cluster.
	ReplicationDispatchRateInMsgs  *int64 `json:"replicationDispatchRateInMsgs,omitempty"`
	ReplicationDispatchRateInBytes *int64 `json:"replicationDispatchRateInBytes,omitempty"`
}
