package broker

import "time"

// Subscription expiry, as upstream's subscriptionExpirationTimeMinutes: a durable subscription
// without consumers for longer than its namespace's subscription_expiration_time_minutes (else
// the broker's; 0: never) is deleted, checked every SubscriptionExpiryCheckInterval. A
// subscription is active while it has consumers; it was last active when it was created, last
// delivered or acknowledged, or last lost a consumer.

// expireSubscriptions deletes the inactive subscriptions of every open persistent topic.
func (b *Broker) expireSubscriptions(now time.Time) {
	expiries := map[string]time.Duration{}
	for t := range b.topics.sweep() {
		if !t.name.Persistent {
			continue
		}
		ns := t.name.NamespaceName()
		expiry, ok := expiries[ns]
		if !ok {
			expiry = b.namespaceLayers(ns).SubscriptionExpiry()
			expiries[ns] = expiry
		}
		if expiry <= 0 {
			continue
		}
		t.locked(func() {
			for _, s := range t.subs {
				if !s.durable || len(s.consumers) > 0 || now.Sub(s.lastActive()) < expiry {
					continue
				}
				b.log.Info("subscription expired: no consumers for longer than its namespace allows",
					"topic", t.full, "subscription", s.name, "expiry", expiry)
				t.removeSubscription(s)
			}
		})
		t.signal() // retention may release what only the expired subscriptions needed
	}
}

// lastActive is when s last had a consumer doing something. Called with t.mu held.
func (s *subscription) lastActive() time.Time {
	last := s.created
	for _, t := range []time.Time{s.lastConsumed, s.lastAck, s.lastLeft} {
		if t.After(last) {
			last = t
		}
	}
	return last
}

// policyLoop runs the periodic policy checks (backlog quotas, subscription expiry, inactive
// topics) until the broker stops.
func (b *Broker) policyLoop() {
	defer b.wg.Done()
	quota := time.NewTicker(every(b.cfg.BacklogQuotaCheckInterval, defaultBacklogQuotaCheck))
	defer quota.Stop()
	expiry := time.NewTicker(every(b.cfg.SubscriptionExpiryCheckInterval, defaultSubscriptionExpiryCheck))
	defer expiry.Stop()
	inactive := time.NewTicker(every(b.cfg.InactiveTopicsCheckInterval, defaultInactiveTopicsCheck))
	defer inactive.Stop()
	for {
		select {
		case <-b.stop:
			return
		case now := <-quota.C:
			b.guard("checking backlog quotas", func() { b.checkBacklogQuotas(now) })
		case now := <-expiry.C:
			b.guard("expiring subscriptions", func() { b.expireSubscriptions(now) })
		case <-inactive.C:
			b.guard("deleting inactive topics", func() { b.deleteInactiveTopics(b.now()) })
		}
	}
}
