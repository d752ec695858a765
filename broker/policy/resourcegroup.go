package policy

import "github.com/letterbox-dev/letterbox/client/adminapi"

// CreatedGroup is g as upstream stores a new resource group: what g leaves unset is -1.
func CreatedGroup(g adminapi.ResourceGroup) adminapi.ResourceGroup {
	orNone(&g.PublishRateInMsgs)
	orNone(&g.PublishRateInBytes)
	orNone(&g.DispatchRateInMsgs)
	orNone(&g.DispatchRateInBytes)
	orNone(&g.ReplicationDispatchRateInMsgs)
	orNone(&g.ReplicationDispatchRateInBytes)
	return g
}

// UpdatedGroup is g with what update sets, as upstream updates a resource group: a field
// update leaves out keeps g's value.
func UpdatedGroup(g, update adminapi.ResourceGroup) adminapi.ResourceGroup {
	g.PublishRateInMsgs = set(update.PublishRateInMsgs, g.PublishRateInMsgs)
	g.PublishRateInBytes = set(update.PublishRateInBytes, g.PublishRateInBytes)
	g.DispatchRateInMsgs = set(update.DispatchRateInMsgs, g.DispatchRateInMsgs)
	g.DispatchRateInBytes = set(update.DispatchRateInBytes, g.DispatchRateInBytes)
	g.ReplicationDispatchRateInMsgs = set(update.ReplicationDispatchRateInMsgs, g.ReplicationDispatchRateInMsgs)
	g.ReplicationDispatchRateInBytes = set(update.ReplicationDispatchRateInBytes, g.ReplicationDispatchRateInBytes)
	return g
}

// GroupPublishRate is what group g's topics take from their producers together, a second.
func GroupPublishRate(g adminapi.ResourceGroup) adminapi.PublishRate {
	return adminapi.PublishRate{PublishThrottlingRateInMsg: First(-1, g.PublishRateInMsgs),
		PublishThrottlingRateInByte: First(-1, g.PublishRateInBytes)}
}

// GroupDispatchRate is what group g's topics deliver together, a second.
func GroupDispatchRate(g adminapi.ResourceGroup) adminapi.DispatchRate {
	return adminapi.DispatchRate{DispatchThrottlingRateInMsg: First(-1, g.DispatchRateInMsgs),
		DispatchThrottlingRateInByte: First(-1, g.DispatchRateInBytes), RatePeriodInSecond: 1}
}

func orNone[T int | int64](p **T) {
	if *p == nil {
		v := T(-1)
		*p = &v
	}
}
