package broker

import (
	"fmt"
	"sort"

	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// Namespaces and their policies, as upstream's /admin/v2/namespaces. Policies (broker/policy)
// are stored whole (upstream's JSON field names) and enforced: autoTopicCreationOverride and
// autoSubscriptionCreationOverride (below), retention (retention.go), message TTL (ttl.go),
// deduplication (dedup.go), the schema compatibility strategy (schema.go), permissions
// (auth_check.go) and the limits of admin_policies.go (producers, consumers, topics, backlog
// quotas, subscription expiry, compaction threshold). Properties are only stored, as upstream.

// Actions upstream's permissions grant.
var authActions = map[string]bool{"produce": true, "consume": true, "functions": true,
	"sources": true, "sinks": true, "packages": true}

func (b *Broker) defaultPolicies() *adminapi.Policies {
	return &adminapi.Policies{
		AuthPolicies: adminapi.AuthPolicies{
			NamespaceAuth:         map[string][]string{},
			DestinationAuth:       map[string]map[string][]string{},
			SubscriptionAuthRoles: map[string][]string{},
		},
		ReplicationClusters:         []string{b.cfg.ClusterName},
		Bundles:                     policy.DefaultBundles(),
		SchemaCompatibilityStrategy: "UNDEFINED",
	}
}

// Namespaces lists a tenant's namespaces, "tenant/ns", sorted.
func (b *Broker) Namespaces(tenant string) ([]string, error) {
	if _, err := b.Tenant(tenant); err != nil {
		return nil, err
	}
	b.topics.mu.Lock()
	defer b.topics.mu.Unlock()
	out := []string{}
	for ns := range b.topics.namespaces {
		if t, _, err := splitNamespace(ns); err == nil && t == tenant {
			out = append(out, ns)
		}
	}
	sort.Strings(out)
	return out, nil
}

// CreateNamespace creates "tenant/ns" with policies p (nil: the defaults).
func (b *Broker) CreateNamespace(ns string, p *adminapi.Policies) error {
	tenant, _, err := splitNamespace(ns)
	if err != nil {
		return err
	}
	np := b.defaultPolicies()
	if p != nil {
		np = policy.CloneNamespace(p)
		def := b.defaultPolicies()
		if np.AuthPolicies.NamespaceAuth == nil {
			np.AuthPolicies = def.AuthPolicies
		}
		if len(np.ReplicationClusters) == 0 {
			np.ReplicationClusters = def.ReplicationClusters
		}
		if np.Bundles, err = policy.CheckBundles(np.Bundles); err != nil {
			return adminErr(ErrInvalidArgument, "%s", err)
		}
		if np.SchemaCompatibilityStrategy == "" {
			np.SchemaCompatibilityStrategy = "UNDEFINED"
		}
		if err := b.checkPolicies(np); err != nil {
			return err
		}
	}
	r := b.topics
	r.mu.Lock()
	defer r.mu.Unlock()
	a, unlock := b.adminLocked()
	defer unlock()
	if _, ok := a.tenants[tenant]; !ok {
		return adminErr(ErrNotFound, "Tenant does not exist")
	}
	if r.namespaces[ns] {
		return adminErr(ErrAlreadyExists, "Namespace already exists")
	}
	if err := a.checkResourceGroup(np); err != nil {
		return err
	}
	if err := b.persistAdmin(storage.BucketNamespaces, ns, np); err != nil {
		return err
	}
	r.namespaces[ns] = true
	a.policies[ns] = np
	a.version.Add(1)
	return nil
}

func (b *Broker) checkPolicies(p *adminapi.Policies) error {
	if o := p.AutoTopicCreationOverride; o != nil {
		if err := checkAutoTopicCreation(o); err != nil {
			return err
		}
	}
	if !validStrategy(p.SchemaCompatibilityStrategy) {
		return adminErr(ErrInvalidArgument, "Invalid schema compatibility strategy %q", p.SchemaCompatibilityStrategy)
	}
	if p.MessageTTLInSeconds != nil && *p.MessageTTLInSeconds < 0 {
		return adminErr(ErrPreconditionFailed, "Invalid value for message TTL, message TTL must >= 0")
	}
	if err := b.checkReplicationClusters(p.ReplicationClusters); err != nil {
		return err
	}
	for _, c := range p.AllowedClusters {
		if c != b.cfg.ClusterName {
			return adminErr(ErrForbidden, "Invalid cluster id: %s", c)
		}
	}
	return checkLimitPolicies(p) // admin_policies.go
}

func validStrategy(s string) bool {
	for _, v := range policy.SchemaCompatibilityStrategies {
		if s == v {
			return true
		}
	}
	return false
}

// checkAutoTopicCreation validates an autoTopicCreationOverride as upstream does: only an
// override that allows auto-creation is checked, and a failure is 412 with upstream's words.
func checkAutoTopicCreation(o *adminapi.AutoTopicCreationOverride) error {
	if !o.AllowAutoTopicCreation {
		return nil
	}
	fail := func(detail string) error {
		return adminErr(ErrPreconditionFailed, "Invalid configuration for autoTopicCreationOverride. the detail is %s", detail)
	}
	switch o.TopicType {
	case "partitioned":
		if o.DefaultNumPartitions == nil {
			return fail("[defaultNumPartitions] cannot be null when the type is partitioned.")
		}
		if *o.DefaultNumPartitions <= 0 {
			return fail("[defaultNumPartitions] cannot be less than 1 for partition type.")
		}
	case "non-partitioned":
		if o.DefaultNumPartitions != nil {
			return fail("[defaultNumPartitions] is not allowed to be set when the type is non-partition.")
		}
	default:
		return fail(fmt.Sprintf("Unknown topic type [%s]", o.TopicType))
	}
	return nil
}

// checkTenant answers upstream's 404 "Tenant does not exist" before anything about the
// namespace, as upstream's namespace endpoints check the tenant first.
func (b *Broker) checkTenant(ns string) error {
	tenant, _, err := splitNamespace(ns)
	if err != nil {
		return err
	}
	a, unlock := b.adminLocked()
	defer unlock()
	if _, ok := a.tenants[tenant]; !ok {
		return adminErr(ErrNotFound, "Tenant does not exist")
	}
	return nil
}

// NamespacePolicies returns a namespace's policies.
func (b *Broker) NamespacePolicies(ns string) (*adminapi.Policies, error) {
	if err := b.checkTenant(ns); err != nil {
		return nil, err
	}
	if !b.topics.hasNamespace(ns) {
		return nil, adminErr(ErrNotFound, "Namespace does not exist")
	}
	a, unlock := b.adminLocked()
	defer unlock()
	p := a.policies[ns]
	if p == nil {
		p = b.defaultPolicies() // public/default, until someone changes it
	}
	return policy.CloneNamespace(p), nil
}

// UpdateNamespacePolicies applies fn to a copy of ns's policies and stores the result.
func (b *Broker) UpdateNamespacePolicies(ns string, fn func(*adminapi.Policies) error) error {
	if err := b.checkTenant(ns); err != nil {
		return err
	}
	r := b.topics
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.namespaces[ns] {
		return adminErr(ErrNotFound, "Namespace does not exist")
	}
	a, unlock := b.adminLocked()
	defer unlock()
	p := a.policies[ns]
	if p == nil {
		p = b.defaultPolicies()
	}
	p = policy.CloneNamespace(p)
	if err := fn(p); err != nil {
		return err
	}
	if err := b.checkPolicies(p); err != nil {
		return err
	}
	if err := a.checkResourceGroup(p); err != nil {
		return err
	}
	if err := b.persistAdmin(storage.BucketNamespaces, ns, p); err != nil {
		return err
	}
	a.policies[ns] = p
	a.version.Add(1)
	return nil
}

// GrantNamespacePermission gives role the actions on ns.
func (b *Broker) GrantNamespacePermission(ns, role string, actions []string) error {
	for _, act := range actions {
		if !authActions[act] {
			return adminErr(ErrInvalidArgument, "Unknown auth action %q", act)
		}
	}
	return b.UpdateNamespacePolicies(ns, func(p *adminapi.Policies) error {
		if p.AuthPolicies.NamespaceAuth == nil {
			p.AuthPolicies.NamespaceAuth = map[string][]string{}
		}
		p.AuthPolicies.NamespaceAuth[role] = append([]string{}, actions...)
		return nil
	})
}

// RevokeNamespacePermission removes role's permissions on ns.
func (b *Broker) RevokeNamespacePermission(ns, role string) error {
	return b.UpdateNamespacePolicies(ns, func(p *adminapi.Policies) error {
		if _, ok := p.AuthPolicies.NamespaceAuth[role]; !ok {
			return adminErr(ErrPreconditionFailed, "Permissions are not set at the namespace level")
		}
		delete(p.AuthPolicies.NamespaceAuth, role)
		return nil
	})
}

// DeleteNamespace deletes ns. Without force it must hold no topics (ErrConflict); with force
// its topics are deleted first, forcibly.
//
// As upstream (PIP-139), the namespace is terminated first, so clients cannot auto-create
// topics in it while its topics go away, and each topic's clients are closed for good
// (allow_reconnect=false, as DeleteTopic closes them).
func (b *Broker) DeleteNamespace(ns string, force bool) error {
	if _, _, err := splitNamespace(ns); err != nil {
		return err
	}
	if !b.topics.hasNamespace(ns) {
		return adminErr(ErrNotFound, "Namespace does not exist")
	}
	topics := b.namespaceTopics(ns)
	if len(topics) > 0 && !force {
		return adminErr(ErrConflict, "Cannot delete non empty namespace")
	}
	// Terminate the namespace first (PIP-139): clients reconnecting while its topics go away
	// cannot re-create any of them.
	b.topics.mu.Lock()
	b.topics.terminateNamespace(ns)
	b.topics.mu.Unlock()
	defer func() {
		b.topics.mu.Lock()
		b.topics.finishNamespaceDeletion(ns)
		b.topics.mu.Unlock()
	}()
	for _, name := range topics {
		var err error
		if n, _ := b.partitionCount(name); n > 0 {
			err = b.DeletePartitionedTopic(name.String(), true)
		} else {
			err = b.DeleteTopic(name.String(), true)
		}
		if err != nil && !isKind(err, ErrNotFound) {
			return err
		}
	}
	r := b.topics
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.namespaces[ns] {
		return adminErr(ErrNotFound, "Namespace does not exist")
	}
	for _, t := range r.topics {
		if t.name.InNamespace(ns) {
			return adminErr(ErrConflict, "Cannot delete non empty namespace: topics were created meanwhile")
		}
	}
	for _, name := range r.stored {
		if name.InNamespace(ns) {
			return adminErr(ErrConflict, "Cannot delete non empty namespace: topics were created meanwhile")
		}
	}
	a, unlock := b.adminLocked()
	defer unlock()
	if err := b.persistAdmin(storage.BucketNamespaces, ns, nil); err != nil {
		return err
	}
	delete(r.namespaces, ns)
	delete(a.policies, ns)
	a.version.Add(1)
	return nil
}

// namespaceTopics lists ns's topics: partitioned base names and non-partitioned topics (no
// partitions), persistent and not.
func (b *Broker) namespaceTopics(ns string) []naming.Topic {
	r := b.topics
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []naming.Topic
	for full := range r.partitioned {
		if name, err := parseTopicName(full); err == nil && name.InNamespace(ns) {
			out = append(out, name)
		}
	}
	for full := range r.byNS[ns] {
		name, ok := r.stored[full]
		if t := r.topics[full]; t != nil {
			name, ok = t.name, true
		}
		if !ok {
			continue
		}
		if _, ok := r.partitioned[name.Base().String()]; ok && name.Partition >= 0 {
			continue
		}
		out = append(out, name)
	}
	return out
}
