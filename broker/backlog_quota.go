package broker

import (
	"time"

	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Backlog quotas, as upstream's: a topic's backlog is what its slowest subscription has not
// acknowledged, measured in bytes (destination_storage: limitSize) or in the age of its oldest
// message (message_age: limitTime seconds). The quota in effect is the topic's own, else its
// namespace's, else the broker's backlogQuotaDefaultLimitBytes / backlogQuotaDefaultLimitSecond
// with backlogQuotaDefaultRetentionPolicy (broker/policy resolves which). Past it:
//
//   - producer_request_hold, producer_exception: a new producer is refused
//     (ProducerBlockedQuotaExceededError, which clients retry, or …Exception, on which they
//     fail their sends), and every BacklogQuotaCheckInterval the topic's producers are
//     disconnected (reconnect allowed) so that they meet the refusal.
//   - consumer_backlog_eviction: producers go on; every BacklogQuotaCheckInterval the slowest
//     subscriptions skip their oldest messages until the backlog is within the quota.
//
// The broker's memory budget (quota.go) acts through the same refusal, for every persistent
// topic at once.

// slowestMarkDelete is the mark-delete position of t's slowest subscription; ok is false when t
// has none (then nothing is a backlog). Called with t.mu held.
func (t *topic) slowestMarkDelete() (p storage.Position, ok bool) {
	for _, s := range t.subs {
		if !ok || s.markDelete.Less(p) {
			p, ok = s.markDelete, true
		}
	}
	return p, ok
}

// backlogBytes estimates the bytes of t's backlog from its slowest subscription, as upstream
// estimates it from ledger sizes. Called with t.mu held.
func (t *topic) backlogBytes() int64 {
	md, ok := t.slowestMarkDelete()
	if !ok {
		return 0
	}
	total := t.log.Entries()
	if total <= 0 {
		return 0
	}
	return t.log.Size() * t.log.EntriesFrom(t.log.Next(md)) / total
}

// backlogAge is how old the oldest message of t's backlog is (0: no backlog). Called with
// t.mu held.
func (t *topic) backlogAge(now time.Time) time.Duration {
	md, ok := t.slowestMarkDelete()
	if !ok {
		return 0
	}
	e, found := t.log.GetHeld(t.log.Next(md))
	if !found {
		return 0
	}
	releaseHold(e.Hold)
	return now.Sub(time.UnixMilli(e.Meta.PublishTime))
}

// overQuota returns the first backlog quota t is over. Called with t.mu held.
func (t *topic) overQuota(now time.Time) (kind string, q adminapi.BacklogQuota, over bool) {
	if !t.name.Persistent {
		return "", q, false
	}
	if q, ok := t.b.layers(t.name).BacklogQuota(policy.QuotaDestinationStorage); ok {
		// An empty backlog is never over, even a quota of 0 bytes.
		if n := t.backlogBytes(); n > 0 && n >= q.LimitSize {
			return policy.QuotaDestinationStorage, q, true
		}
	}
	if q, ok := t.b.layers(t.name).BacklogQuota(policy.QuotaMessageAge); ok {
		if age := t.backlogAge(now); age > 0 && age >= time.Duration(q.LimitTime)*time.Second {
			return policy.QuotaMessageAge, q, true
		}
	}
	return "", q, false
}

// backlogQuotaRefusal refuses a new producer on a topic over a quota that holds producers back.
// Called with t.mu held.
func (t *topic) backlogQuotaRefusal() *serverError {
	_, q, over := t.overQuota(time.Now())
	if !over || q.Policy == policy.QuotaConsumerBacklogEviction {
		return nil
	}
	code := pb.ServerError_ProducerBlockedQuotaExceededError
	if q.Policy == policy.QuotaProducerException {
		code = pb.ServerError_ProducerBlockedQuotaExceededException
	}
	return errorf(code, quotaMessage)
}

// checkBacklogQuotas acts on every open persistent topic over a backlog quota.
func (b *Broker) checkBacklogQuotas(now time.Time) {
	for t := range b.topics.sweep() {
		if !t.name.Persistent {
			continue
		}
		t.locked(func() {
			kind, q, over := t.overQuota(now)
			if !over {
				return
			}
			switch q.Policy {
			case policy.QuotaConsumerBacklogEviction:
				if n := t.evictBacklog(kind, q, now); n > 0 {
					b.log.Info("backlog quota exceeded: oldest messages evicted", "topic", t.full, "quota", kind, "entries", n)
					t.signal()
				}
			default:
				if len(t.producers)+len(t.waiting) > 0 {
					b.log.Info("backlog quota exceeded: producers disconnected", "topic", t.full, "quota", kind, "policy", q.Policy)
					t.holdProducers()
				}
			}
		})
	}
}

// evictBacklog makes the slowest subscriptions skip their oldest entries until t is within
// quota q of kind, and returns how many entries were skipped. Called with t.mu held.
func (t *topic) evictBacklog(kind string, q adminapi.BacklogQuota, now time.Time) int64 {
	var skipped int64
	if kind == policy.QuotaMessageAge {
		// Everything older than the limit goes, on every subscription, as TTL expires it.
		before := now.Add(-time.Duration(q.LimitTime) * time.Second)
		for _, s := range t.subs {
			skipped += s.expire(before, now)
		}
		return skipped
	}
	// destination_storage: skip on the slowest subscriptions, an estimated number of entries
	// at a time, until the estimate is within the quota.
	for range 64 {
		over := t.backlogBytes() - q.LimitSize
		if t.backlogBytes() == 0 || over < 0 {
			break
		}
		md, _ := t.slowestMarkDelete()
		avg := max(t.log.Size()/max(t.log.Entries(), 1), 1)
		n := over/avg + 1
		progress := false
		for _, s := range t.subs {
			if s.markDelete == md {
				if k := s.skipOldest(n); k > 0 {
					skipped += k
					progress = true
				}
			}
		}
		if !progress {
			break
		}
	}
	return skipped
}

// skipOldest acknowledges the n oldest entries of s's backlog and returns how many it skipped.
// Called with t.mu held.
func (s *subscription) skipOldest(n int64) int64 {
	var skip []storage.Position
	s.scanBacklogUntil(func(e storage.Entry) bool {
		skip = append(skip, e.Pos)
		return int64(len(skip)) < n
	})
	for _, p := range skip {
		s.ackWhole(p)
	}
	s.advanceMarkDelete()
	if next := s.topic.log.Next(s.markDelete); s.readPos.Less(next) {
		s.readPos = next
	}
	return int64(len(skip))
}
