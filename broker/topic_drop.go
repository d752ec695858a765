package broker

import (
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// Finding the topics an operation applies to, and dropping a topic with what the broker keeps
// of it (its producers, schema, policies and metadata): deletion and the inactive-topic sweep.

// targets resolves name to the topics an operation applies to: the topic itself, or every
// partition of a partitioned topic (upstream applies subscription operations to all).
func (b *Broker) targets(name naming.Topic) ([]*topic, error) {
	if n, ok := b.partitionCount(name); ok {
		out := make([]*topic, 0, n)
		for i := range n {
			t, err := b.topicFor(name.PartitionTopic(i), "")
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		return out, nil
	}
	t, err := b.topicFor(name, "")
	if err != nil {
		return nil, err
	}
	return []*topic{t}, nil
}

// dropTopic finishes deleting t, already removed from the registry: stops it, closes its
// clients, deletes its log and cursors, and (whole topics only) its schema and properties.
func (b *Broker) dropTopic(t *topic, whole bool) {
	t.close()
	t.locked(func() {
		for _, s := range t.subs {
			t.closeSubscriptionConsumers(s, false, "topic "+t.full+" was deleted")
			t.removeSubscription(s)
		}
		b.closeProducersForGood(t, "topic "+t.full+" was deleted")
	})
	if err := b.store.DeleteLog(t.full); err != nil {
		b.log.Warn("deleting a topic's log", "topic", t.full, "err", err)
	}
	if err := b.store.Metadata().Update(func(tx storage.MetadataTx) error {
		if err := tx.Delete(storage.BucketDedup, t.full); err != nil {
			return err
		}
		if err := tx.Delete(bucketCompacted, t.full); err != nil { // compaction.go
			return err
		}
		return tx.DeletePrefix(storage.BucketCursors, cursorKey(t.full, ""))
	}); err != nil {
		b.log.Warn("deleting a topic's cursors", "topic", t.full, "err", err)
	}
	b.forgetTopicMetadata(t.name, whole)
}

// closeProducersForGood closes t's producers with allow_reconnect=false (PIP-139). Called with
// t.mu held.
func (b *Broker) closeProducersForGood(t *topic, reason string) {
	b.closeTopicProducers(t, false, reason)
}

func (b *Broker) closeTopicProducers(t *topic, allowReconnect bool, reason string) {
	for p := range t.producers {
		delete(t.producers, p)
		p.conn.forgetProducer(p)
		p.conn.sendCloseProducer(p.id, allowReconnect, reason)
	}
	for _, p := range t.waiting {
		p.conn.forgetProducer(p)
		p.conn.sendCloseProducer(p.id, allowReconnect, reason)
	}
	t.waiting = nil
}

// forgetTopicMetadata drops a deleted topic's stored record (properties, terminated mark)
// and, for a whole topic, its schema.
func (b *Broker) forgetTopicMetadata(name naming.Topic, whole bool) {
	if whole {
		b.schemas.drop(name)
		b.forgetTopicPolicies(name.String())
	}
	full := name.String()
	if err := b.persistAdmin(storage.BucketTopics, full, nil); err != nil {
		b.log.Warn("deleting a topic's metadata", "topic", full, "err", err)
	}
	a, unlock := b.adminLocked()
	defer unlock()
	delete(a.terminated, full)
}

// forgetTopicPolicies drops a deleted topic's policies.
func (b *Broker) forgetTopicPolicies(full string) {
	a, unlock := b.adminLocked()
	_, ok := a.topicPolicies[full]
	delete(a.topicPolicies, full)
	a.version.Add(1)
	unlock()
	if !ok {
		return
	}
	if err := b.persistAdmin(bucketTopicPolicies, full, nil); err != nil {
		b.log.Warn("deleting a topic's policies", "topic", full, "err", err)
	}
}
