package broker

import (
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Topics, as upstream's /admin/v2/{persistent,non-persistent}/{tenant}/{ns}/...: lists,
// creation (partitioned or not, with properties), partition updates and deletion. Properties
// are in admin_topic_properties.go; last message id, lookup by time and termination in
// admin_topic_messages.go.
//
// Deleting a topic (PIP-139, deleted_topics.go) closes its producers and consumers with
// allow_reconnect=false and leaves a tombstone for TopicTombstoneTTL, during which clients
// cannot auto-create it again; creating it through the admin API lifts the tombstone.

// Topics lists ns's non-partitioned topics and the partitions of its partitioned topics, in
// one domain (persistent or not), sorted.
func (b *Broker) Topics(ns string, persistent bool) ([]string, error) {
	if err := b.checkNamespace(ns); err != nil {
		return nil, err
	}
	mode := pb.CommandGetTopicsOfNamespace_NON_PERSISTENT
	if persistent {
		mode = pb.CommandGetTopicsOfNamespace_PERSISTENT
	}
	out := b.topics.list(ns, mode)
	if out == nil {
		out = []string{}
	}
	return out, nil
}

// PartitionedTopics lists ns's partitioned topics (base names) in one domain, sorted.
func (b *Broker) PartitionedTopics(ns string, persistent bool) ([]string, error) {
	if err := b.checkNamespace(ns); err != nil {
		return nil, err
	}
	r := b.topics
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []string{}
	for full := range r.partitioned {
		if name, err := parseTopicName(full); err == nil && name.InNamespace(ns) && name.Persistent == persistent {
			out = append(out, full)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (b *Broker) checkNamespace(ns string) error {
	if _, _, err := splitNamespace(ns); err != nil {
		return err
	}
	if !b.topics.hasNamespace(ns) {
		return adminErr(ErrNotFound, "Namespace does not exist")
	}
	return nil
}

// CreateTopic creates a non-partitioned topic with properties (may be nil).
func (b *Broker) CreateTopic(tname string, props map[string]string) error {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return err
	}
	r := b.topics
	r.mu.Lock()
	defer r.mu.Unlock()
	full := name.String()
	if !r.namespaces[name.NamespaceName()] {
		return adminErr(ErrNotFound, "Namespace does not exist")
	}
	if r.knownLocked(full) {
		return adminErr(ErrAlreadyExists, "This topic already exists")
	}
	if _, ok := r.partitioned[full]; ok {
		return adminErr(ErrAlreadyExists, "This topic already exists")
	}
	if n, ok := r.partitioned[name.Base().String()]; ok && name.Partition >= 0 && name.Partition < n {
		return adminErr(ErrPreconditionFailed, "%s is a partition of a partitioned topic", full)
	}
	if why := r.maxTopicsRefusal(name.NamespaceName(), 1); why != "" { // policies.go
		return adminErr(ErrPreconditionFailed, "%s", why)
	}
	if _, serr := r.openCreating(name, maps.Clone(props)); serr != nil {
		return adminErr(ErrPreconditionFailed, "%s", serr.msg)
	}
	r.unbury(full)
	return nil
}

// CreatePartitionedTopic creates a partitioned topic of n partitions with properties.
func (b *Broker) CreatePartitionedTopic(tname string, n int, props map[string]string) error {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return err
	}
	if n <= 0 {
		return adminErr(ErrNotAcceptable, "Number of partitions should be more than 0")
	}
	if strings.Contains(name.Local, naming.PartitionSuffix) {
		return adminErr(ErrPreconditionFailed, "Partitioned Topic Name should not contain '-partition-'")
	}
	r := b.topics
	r.mu.Lock()
	defer r.mu.Unlock()
	full := name.String()
	if !r.namespaces[name.NamespaceName()] {
		return adminErr(ErrNotFound, "Namespace does not exist")
	}
	if _, ok := r.partitioned[full]; ok {
		return adminErr(ErrAlreadyExists, "This topic already exists")
	}
	if r.knownLocked(full) {
		return adminErr(ErrAlreadyExists, "This topic already exists")
	}
	if why := r.maxTopicsRefusal(name.NamespaceName(), n); why != "" { // policies.go
		return adminErr(ErrPreconditionFailed, "%s", why)
	}
	if err := b.storeTopicRecord(full, topicRecord{Properties: maps.Clone(props), Created: time.Now().UnixMilli()}); err != nil {
		return adminErr(ErrPreconditionFailed, "cannot store the metadata of %s: %v", full, err)
	}
	if err := b.persistPartitioned(full, n); err != nil {
		return adminErr(ErrPreconditionFailed, "cannot store the partitioned metadata of %s: %v", full, err)
	}
	r.partitioned[full] = n
	r.unbury(full)
	// Upstream creates the partitions at once; so do we, so they show in lists and stats.
	for i := range n {
		if _, ok := r.topics[name.PartitionTopic(i).String()]; !ok {
			r.openLocked(name.PartitionTopic(i))
		}
	}
	return nil
}

// UpdatePartitions raises a partitioned topic's partition count to n.
func (b *Broker) UpdatePartitions(tname string, n int) error {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return err
	}
	if n <= 0 {
		return adminErr(ErrNotAcceptable, "Number of partitions should be more than 0")
	}
	r := b.topics
	r.mu.Lock()
	defer r.mu.Unlock()
	full := name.String()
	cur, ok := r.partitioned[full]
	if !ok {
		return adminErr(ErrNotFound, "Partitioned topic does not exist")
	}
	if n <= cur {
		return adminErr(ErrUnprocessable, "Desired partitions %d can't be less than the current partitions %d.", n, cur)
	}
	if why := r.maxTopicsRefusal(name.NamespaceName(), n-cur); why != "" { // policies.go
		return adminErr(ErrPreconditionFailed, "%s", why)
	}
	if err := b.persistPartitioned(full, n); err != nil {
		return adminErr(ErrPreconditionFailed, "cannot store the partitioned metadata of %s: %v", full, err)
	}
	r.partitioned[full] = n
	for i := cur; i < n; i++ {
		if _, ok := r.topics[name.PartitionTopic(i).String()]; !ok {
			r.openLocked(name.PartitionTopic(i))
		}
	}
	return nil
}

// PartitionedMetadata returns a topic's partition count: 0 for an existing non-partitioned
// topic, ErrNotFound when there is no such topic.
func (b *Broker) PartitionedMetadata(tname string) (int, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return 0, err
	}
	r := b.topics
	r.mu.Lock()
	defer r.mu.Unlock()
	if n, ok := r.partitioned[name.String()]; ok {
		return n, nil
	}
	if r.knownLocked(name.String()) {
		return 0, nil
	}
	if n, ok := r.partitioned[name.Base().String()]; ok && name.Partition >= 0 && name.Partition < n {
		return 0, nil
	}
	return 0, adminErr(ErrNotFound, "Topic %s not found", name)
}

// PartitionedMetadataAutoCreate is the partitioned metadata a client asks before it produces
// or consumes (upstream's checkAllowAutoCreation=true, what the HTTP lookup of the official
// clients sends): for a topic that does not exist yet and may be auto-created it answers 0,
// or, when the namespace or broker auto-creates partitioned topics, creates the partitioned
// topic with the default partition count and answers that, as upstream does. The producer or
// consumer that follows creates a non-partitioned topic.
func (b *Broker) PartitionedMetadataAutoCreate(tname string) (int, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return 0, err
	}
	n, serr := b.topics.partitionedMetadata(name, true)
	if serr == nil {
		return n, nil
	}
	if serr.code == pb.ServerError_TopicNotFound {
		// Auto-creation is off, the namespace is missing or being deleted, or the topic was
		// deleted moments ago (PIP-139): the message says which.
		return 0, adminErr(ErrNotFound, "%s", serr.msg)
	}
	return 0, adminErr(ErrPreconditionFailed, "%s", serr.msg)
}

// CheckLookup is the HTTP lookup's check, as upstream's: a persistent topic (or partition)
// that does not exist is looked up only when it may be auto-created; a non-persistent
// non-partitioned topic lives only while used, so it is always looked up.
func (b *Broker) CheckLookup(tname string) error {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return err
	}
	if !name.Persistent && name.Partition < 0 {
		return nil
	}
	if _, err := b.PartitionedMetadata(tname); err == nil {
		return nil
	}
	if b.topics.hasNamespace(name.NamespaceName()) && b.autoTopicAllowed(name.NamespaceName()) {
		return nil
	}
	return adminErr(ErrNotFound, "Topic not found %s", name)
}

// DeleteTopic deletes a non-partitioned topic (or one partition). Without force it fails with
// ErrPreconditionFailed while producers or consumers are connected; with force they are closed.
func (b *Broker) DeleteTopic(tname string, force bool) error {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return err
	}
	r := b.topics
	r.mu.Lock()
	full := name.String()
	if _, ok := r.partitioned[full]; ok {
		r.mu.Unlock()
		return adminErr(ErrPreconditionFailed, "%s is a partitioned topic: delete it with its partitions", full)
	}
	t, ok, serr := r.liveLocked(name) // a stored topic is opened to be deleted
	if !ok {
		r.mu.Unlock()
		return adminErr(ErrNotFound, "Topic not found")
	}
	if serr != nil {
		r.mu.Unlock()
		return adminErr(ErrPreconditionFailed, "%s", serr.msg)
	}
	if !force && t.busy() {
		r.mu.Unlock()
		return adminErr(ErrPreconditionFailed, "Topic has active producers/subscriptions")
	}
	delete(r.topics, full)
	r.unindex(full, name)
	r.bury(full)
	r.mu.Unlock()
	b.dropTopic(t, name.Partition < 0)
	return nil
}

// DeletePartitionedTopic deletes a partitioned topic and all its partitions.
func (b *Broker) DeletePartitionedTopic(tname string, force bool) error {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return err
	}
	r := b.topics
	r.mu.Lock()
	full := name.String()
	n, ok := r.partitioned[full]
	if !ok {
		r.mu.Unlock()
		if _, err := b.topicFor(name, ""); err == nil {
			return adminErr(ErrNotFound, "Partitioned topic does not exist: %s is not partitioned", full)
		}
		return adminErr(ErrNotFound, "Partitioned topic does not exist")
	}
	var parts []*topic
	for i := range n {
		// Stored partitions are opened to be deleted with the others.
		if t, ok, serr := r.liveLocked(name.PartitionTopic(i)); ok && serr == nil {
			parts = append(parts, t)
		} else if serr != nil {
			r.mu.Unlock()
			return adminErr(ErrPreconditionFailed, "%s", serr.msg)
		}
	}
	if !force {
		for _, t := range parts {
			if t.busy() {
				r.mu.Unlock()
				return adminErr(ErrPreconditionFailed, "Topic has active producers/subscriptions")
			}
		}
	}
	if err := b.persistPartitioned(full, 0); err != nil {
		r.mu.Unlock()
		return adminErr(ErrPreconditionFailed, "cannot delete the partitioned metadata of %s: %v", full, err)
	}
	delete(r.partitioned, full)
	r.bury(full)
	for _, t := range parts {
		delete(r.topics, t.full)
		r.unindex(t.full, t.name)
	}
	r.mu.Unlock()
	for _, t := range parts {
		b.dropTopic(t, false)
	}
	b.forgetTopicMetadata(name, true)
	return nil
}

// busy reports connected producers or consumers. Takes t.mu.
func (t *topic) busy() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.producers) > 0 || len(t.waiting) > 0 {
		return true
	}
	for _, s := range t.subs {
		if len(s.consumers) > 0 {
			return true
		}
	}
	return false
}
