package broker

import (
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
)

// Message TTL, as upstream: every MessageExpiryCheckInterval (messageExpiryCheckIntervalInMinutes,
// five minutes by default) the broker acknowledges, on every subscription of every persistent
// topic, the entries published longer ago than the topic's TTL: its topic-level messageTTL, else
// its namespace's message_ttl_in_seconds, else the broker's ttlDurationDefaultInSeconds; 0 means
// messages never expire. Expiry moves the mark-delete position, so what expired is gone for that
// subscription (a DLQ's initial subscription included) and retention may then release it. The admin
// API's expireMessages does the same on demand. Entries leaving the backlog this way count as
// expired in the subscription's stats (msgRateExpired, totalMsgExpired, lastExpireTimestamp).

// expiryLoop expires messages every MessageExpiryCheckInterval until the broker stops.
func (b *Broker) expiryLoop() {
	defer b.wg.Done()
	tick := time.NewTicker(b.cfg.MessageExpiryCheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-tick.C:
			b.guard("expiring messages", func() { b.expireByTTL(b.now()) })
		}
	}
}

// expireByTTL expires, on every subscription of every persistent topic with a TTL, the entries
// published before now minus the TTL.
func (b *Broker) expireByTTL(now time.Time) {
	for t := range b.topics.sweep() {
		if !t.name.Persistent {
			continue // nothing is kept to expire
		}
		ttl := b.layers(t.name).MessageTTL()
		if ttl <= 0 {
			continue
		}
		expired := int64(0)
		t.locked(func() {
			for _, s := range t.subs {
				expired += s.expire(now.Add(-ttl), now)
			}
		})
		if expired > 0 {
			b.log.Info("messages expired", "topic", t.full, "entries", expired, "ttl", ttl)
			t.signal() // dispatch past them, and let retention release them
		}
	}
}

// expire acknowledges the entries published before the given time and returns how many left
// the backlog, counting them as expired. Called with t.mu held.
func (s *subscription) expire(before, now time.Time) int64 {
	// The entry before the first one published at or after the limit; {ledger, -1} when that
	// one opens its ledger, as a new subscription's mark-delete position is.
	p := s.topic.log.FindByTime(before.UnixMilli())
	upTo := storage.Position{Ledger: p.Ledger, Entry: p.Entry - 1}
	if !s.markDelete.Less(upTo) {
		return 0
	}
	backlog := s.backlogEntries()
	s.ackCumulative(upTo, nil)
	n := backlog - s.backlogEntries()
	if n > 0 {
		s.msgExpired += n
		s.lastExpire = now
	}
	return n
}
