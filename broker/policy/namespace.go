package policy

import (
	"encoding/json"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// SchemaCompatibilityStrategies are the strategy names upstream accepts.
var SchemaCompatibilityStrategies = []string{"UNDEFINED", "ALWAYS_INCOMPATIBLE", "ALWAYS_COMPATIBLE",
	"BACKWARD", "FORWARD", "FULL", "BACKWARD_TRANSITIVE", "FORWARD_TRANSITIVE", "FULL_TRANSITIVE"}

// CloneNamespace returns a deep copy of p, its maps made empty rather than null as upstream
// answers them. Stored policies are never changed in place: an update clones, edits the clone
// and stores it, so a *Policies read from the store may be used after the lock that guards the
// store.
func CloneNamespace(p *adminapi.Policies) *adminapi.Policies {
	data, _ := json.Marshal(p)
	out := &adminapi.Policies{}
	json.Unmarshal(data, out)
	if out.BacklogQuotaMap == nil {
		out.BacklogQuotaMap = map[string]adminapi.BacklogQuota{}
	}
	if out.Properties == nil {
		out.Properties = map[string]string{}
	}
	mapOf(&out.PublishMaxMessageRate)
	mapOf(&out.TopicDispatchRate)
	mapOf(&out.ClusterDispatchRate)
	mapOf(&out.SubscriptionDispatchRate)
	mapOf(&out.ClusterSubscribeRate)
	if out.SubscriptionTypesEnabled == nil {
		out.SubscriptionTypesEnabled = []string{}
	}
	if out.AllowedClusters == nil {
		out.AllowedClusters = []string{}
	}
	// Policies stored before these fields existed read as upstream's defaults.
	if out.SubscriptionAuthMode == "" {
		out.SubscriptionAuthMode = SubscriptionAuthNone
	}
	return out
}

func mapOf[V any](m *map[string]V) {
	if *m == nil {
		*m = map[string]V{}
	}
}
