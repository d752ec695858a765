package broker

// Unloading a topic, as upstream's PersistentTopic.close when a topic is unloaded: producers and
// consumers are closed with reconnect allowed (CLOSE_PRODUCER / CLOSE_CONSUMER naming no other
// broker, so clients look the topic up again and come back here), its durable cursors and
// deduplication state are stored, the current ledger is closed, and the topic goes back to
// the stored ones, to be opened again, with a new ledger, by its next use (topics_lazy.go).
// What lives only in the open topic goes with it, as upstream: readers' (non-durable)
// subscriptions, whose clients re-create them from their last message on reconnecting, the
// counters behind stats, and the status of the last compaction.

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
	w := newStateWrites()
	closed := false
	t.locked(func() {
		if t.closed {
			closed = true
			return
		}
		t.closed = true
		reason := "topic " + t.full + " was unloaded"
		b.closeTopicProducers(t, true, reason)
		for _, s := range t.subs {
			t.closeSubscriptionConsumers(s, true, reason)
		}
		w.gather(b, t, true) // every cursor: the flusher has nothing to add
	})
	if closed {
		return
	}
	delete(r.topics, t.full)
	if t.name.Persistent {
		r.stored[t.full] = t.name
	} else {
		r.unindex(t.full, t.name)
	}
	err := w.write(b.store.Metadata())
	if err != nil {
		// The cursors reopen from their last flush: at-least-once, as after a crash.
		b.log.Error("storing the cursors of an unloaded topic", "topic", t.full, "err", err)
	}
	t.stopDispatch()
	b.closeCurrentLedger(t)
	b.log.Info("topic unloaded", "topic", t.full)
}

// closeCurrentLedger closes t's open ledger as unloading does upstream; the log stays open for
// the topic's next use, which appends to a new ledger.
func (b *Broker) closeCurrentLedger(t *topic) {
	t.log.Roll()
}
