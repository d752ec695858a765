package policy

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

// Created is g as upstream stores a new group: what g leaves unset is -1.
func (g ResourceGroup) Created() ResourceGroup {
	orNone(&g.PublishRateInMsgs)
	orNone(&g.PublishRateInBytes)
	orNone(&g.DispatchRateInMsgs)
	orNone(&g.DispatchRateInBytes)
	orNone(&g.ReplicationDispatchRateInMsgs)
	orNone(&g.ReplicationDispatchRateInBytes)
	return g
}

// Updated is g with what update sets, as upstream updates a group: a field update leaves out
// keeps g's value.
func (g ResourceGroup) Updated(update ResourceGroup) ResourceGroup {
	g.PublishRateInMsgs = set(update.PublishRateInMsgs, g.PublishRateInMsgs)
	g.PublishRateInBytes = set(update.PublishRateInBytes, g.PublishRateInBytes)
	g.DispatchRateInMsgs = set(update.DispatchRateInMsgs, g.DispatchRateInMsgs)
	g.DispatchRateInBytes = set(update.DispatchRateInBytes, g.DispatchRateInBytes)
	g.ReplicationDispatchRateInMsgs = set(update.ReplicationDispatchRateInMsgs, g.ReplicationDispatchRateInMsgs)
	g.ReplicationDispatchRateInBytes = set(update.ReplicationDispatchRateInBytes, g.ReplicationDispatchRateInBytes)
	return g
}

// PublishRate is what the group's topics take from their producers together, a second.
func (g ResourceGroup) PublishRate() PublishRate {
	return PublishRate{PublishThrottlingRateInMsg: First(-1, g.PublishRateInMsgs),
		PublishThrottlingRateInByte: First(-1, g.PublishRateInBytes)}
}

// DispatchRate is what the group's topics deliver together, a second.
func (g ResourceGroup) DispatchRate() DispatchRate {
	return DispatchRate{DispatchThrottlingRateInMsg: First(-1, g.DispatchRateInMsgs),
		DispatchThrottlingRateInByte: First(-1, g.DispatchRateInBytes), RatePeriodInSecond: 1}
}

func orNone[T int | int64](p **T) {
	if *p == nil {
		v := T(-1)
		*p = &v
	}
}
