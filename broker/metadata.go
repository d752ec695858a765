package broker

// The broker's metadata besides topics: tenants, namespace and topic policies and terminated
// topics, which the admin API edits and the core reads. How it is stored: metadata_store.go.

import (
	"sync"
	"sync/atomic"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// adminState is what the admin API adds to the broker: tenants, namespace policies, topic
// policies, resource groups and terminated topics (persisted in the store's tenants,
// namespaces, topicPolicies, resourceGroups and topics buckets: metadata_store.go), plus the
// rate samples behind the stats. Guarded by mu, a leaf lock.
type adminState struct {
	mu         sync.Mutex
	loaded     bool
	tenants    map[string]*adminapi.TenantInfo
	policies   map[string]*adminapi.Policies // "tenant/ns" → policies
	terminated map[string]bool               // topic full name → terminated
	// topicPolicies are the topic-level policies by topic (a partitioned topic's base name),
	// admin_topic_policies.go.
	topicPolicies map[string]*adminapi.TopicPolicies
	// resourceGroups are the resource groups by name (admin_resource_groups.go).
	resourceGroups map[string]adminapi.ResourceGroup
	// version counts the changes to policies, so that topics know when to resolve theirs again
	// (topic_limits.go); read without the lock.
	version atomic.Uint64

	samplerOnce sync.Once
	rates       rateSamples

	// unlock is mu.Unlock as a func value, made once: a method value made at each call is an
	// allocation, and the SEND path takes the admin lock twice per message.
	unlock func()
}

// adminLocked returns the broker's admin state with its maps made, locked; call the returned unlock.
func (b *Broker) adminLocked() (*adminState, func()) {
	a := &b.admin
	a.mu.Lock()
	if !a.loaded {
		a.loaded = true
		a.tenants = map[string]*adminapi.TenantInfo{"public": {AdminRoles: []string{}, AllowedClusters: []string{b.cfg.ClusterName}}}
		a.policies = map[string]*adminapi.Policies{}
		a.terminated = map[string]bool{}
		a.topicPolicies = map[string]*adminapi.TopicPolicies{}
		a.resourceGroups = map[string]adminapi.ResourceGroup{}
		a.unlock = a.mu.Unlock
	}
	return a, a.unlock
}
