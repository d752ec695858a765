package broker

import (
	"encoding/json"

	"github.com/letterbox-dev/letterbox/broker/storage"
)

// Unloading a topic, as upstream's PersistentTopic.close when a topic is unloaded: producers and
// consumers are closed with reconnect allowed (CLOSE_PRODUCER / CLOSE_CONSUMER naming no other
// broker, so clients look the topic up again and come back here), its durable cursors and
// deduplication state are stored, the current ledger is closed, and the topic goes back to
// the stored ones, to be opened again, with a new ledger, by its next use (topics_lazy.go).
// What lives only in the open topic goes with it, as upstream: readers' (non-durable)
// subscriptions, whose clients re-create them from their last message on reconnecting, the
// counters behind stats, and the status of the last compaction.

// UnloadTopic unloads a topic, or every partition of a partitioned one.
func (b *Broker) UnloadTopic(tname string) error {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return err
	}
	ts, err := b.targets(name)
	if err != nil {
		return err
	}
	for _, t := range ts {
		b.unload(t)
	}
	return nil
}

// UnloadNamespace unloads every open topic of namespace ns ("tenant/ns"); bundle, when not "",
// must be the namespace's one bundle (bundleRange).
func (b *Broker) UnloadNamespace(ns, bundle string) error {
	if _, err := b.NamespacePolicies(ns); err != nil {
		return err
	}
	if bundle != "" && bundle != bundleRange {
		return adminErr(ErrNotFound, "Namespace bundle %s/%s not found: the namespace has one bundle, %s", ns, bundle, bundleRange)
	}
	for _, t := range b.topics.all() {
		if t.name.namespace() == ns {
			b.unload(t)
		}
	}
	return nil
}

// unload closes t's clients (reconnect allowed), stores its state and returns it to the stored
// topics. The registry stays locked until t's state is stored and its dispatcher stopped, so
// that its next use, which opens it again, finds its cursors as they were.
func (b *Broker) unload(t *topic) {
	r := b.topics
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.topics[t.full] != t {
		return // deleted or unloaded meanwhile
	}
	var puts map[string][]byte
	var dels []string
	var dedup []byte
	closed := false
	t.locked(func() {
		if t.closed {
			closed = true
			return
		}
		t.closed = true
		reason := "topic " + t.full + " was unloaded"
		b.closeTopicProducers(t, true, reason)
		puts = map[string][]byte{}
		for _, s := range t.subs {
			t.closeSubscriptionConsumers(s, true, reason)
			if !s.durable {
				continue
			}
			v, err := json.Marshal(s.snapshot())
			if err != nil {
				b.log.Error("encode cursor", "topic", t.full, "subscription", s.name, "err", err)
				continue
			}
			puts[cursorKey(t.full, s.name)] = v
			s.dirty = false // stored here: the flusher has nothing to add
		}
		for _, name := range t.deletedSubs {
			dels = append(dels, cursorKey(t.full, name))
		}
		t.deletedSubs = nil
		if t.dedup != nil {
			dedup, _ = t.dedup.snapshot()
		}
	})
	if closed {
		return
	}
	delete(r.topics, t.full)
	if t.name.Persistent {
		r.stored[t.full] = t.name
	}
	err := b.store.Metadata().Update(func(tx storage.MetadataTx) error {
		for _, k := range dels {
			if _, ok := puts[k]; !ok {
				if err := tx.Delete(storage.BucketCursors, k); err != nil {
					return err
				}
			}
		}
		for k, v := range puts {
			if err := tx.Put(storage.BucketCursors, k, v); err != nil {
				return err
			}
		}
		if dedup != nil {
			return tx.Put(storage.BucketDedup, t.full, dedup)
		}
		return nil
	})
	if err != nil {
		// The cursors reopen from their last flush: at-least-once, as after a crash.
		b.log.Error("storing the cursors of an unloaded topic", "topic", t.full, "err", err)
	}
	close(t.done)
	t.wg.Wait()
	b.closeCurrentLedger(t)
	b.log.Info("topic unloaded", "topic", t.full)
}

// closeCurrentLedger closes t's open ledger as unloading does upstream; the log stays open for
// the topic's next use, which appends to a new ledger.
func (b *Broker) closeCurrentLedger(t *topic) {
	t.log.Roll()
}
