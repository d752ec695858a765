package broker

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// The active consumer of Exclusive and Failover subscriptions, as upstream's single-active-
// consumer dispatcher keeps it.
//
// When a Failover subscription's active consumer changes (the first consumer arrives, the active
// one leaves, or one that the election rule of electActive prefers joins), upstream's dispatcher
// waits activeConsumerFailoverDelayTimeMillis (1 s by default) before it dispatches again: messages
// the previous active consumer was given may still be acknowledged meanwhile, rather than delivered
// twice. Then it rewinds (what is unacknowledged goes to the new active consumer), tells every
// consumer of the subscription whether it is the active one (ACTIVE_CONSUMER_CHANGE) and reads on.
// The official Go client registers a consumer only once SUBSCRIBE's SUCCESS arrives and drops an
// ACTIVE_CONSUMER_CHANGE for a consumer it does not know, so the delay is also what lets its
// failover listeners fire. A consumer that joins without changing the active one is told at once,
// alone. With a delay of 0, and on non-persistent topics (whose upstream dispatcher does not wait),
// the change takes effect at once.
//
// The wait is the topic's dispatcher's own: the subscription records when it ends (switchAt)
// and dispatch holds until then, so no goroutine or timer outlives the topic.

// electActive picks the consumer an Exclusive/Failover subscription dispatches to and reports
// whether it changed. Upstream's rule: consumers ordered by priority (lower first), then by
// name; among those of the highest priority, on a partition the partition index modulo their
// count picks, and on a non-partitioned topic (or with activeConsumerFailoverConsistentHashing)
// a hash ring of their names does (activeByHashRing). Called with the topic's mutex held.
func (s *subscription) electActive() bool {
	if s.shared() {
		return false
	}
	var next *consumer
	if len(s.consumers) > 0 {
		ordered := slices.Clone(s.consumers)
		slices.SortStableFunc(ordered, func(a, b *consumer) int {
			if a.priority != b.priority {
				return int(a.priority) - int(b.priority)
			}
			return strings.Compare(a.name, b.name)
		})
		top := 1
		for top < len(ordered) && ordered[top].priority == ordered[0].priority {
			top++
		}
		p := s.topic.name.Partition
		if p >= 0 && !s.topic.b.cfg.ActiveConsumerFailoverConsistentHashing {
			next = ordered[p%top]
		} else {
			next = ordered[activeByHashRing(s.topic.full, ordered[:top])]
		}
	}
	if next == s.active {
		return false
	}
	s.active = next
	delay := s.topic.b.cfg.ActiveConsumerFailoverDelay
	if s.subType != pb.CommandSubscribe_Failover || delay <= 0 || !s.topic.name.Persistent {
		s.finishSwitch()
		return true
	}
	if s.switchAt.IsZero() {
		// A switch already waiting takes this one with it, as upstream's pending read task.
		s.switchAt = time.Now().Add(delay)
		s.topic.signal() // the dispatcher wakes at switchAt
	}
	return true
}

// ringReplicas is upstream's points per consumer on the failover hash ring.
const ringReplicas = 100

// activeByHashRing is upstream's choice of active consumer by hash ring: each consumer is placed at
// the hashes of its name followed by 0..99 (of two consumers at the same point, the later one keeps
// it), and the topic's full name's hash picks the first point at or after it, wrapping. Hashes are
// Murmur3 32-bit with the sign bit cleared, as upstream's Murmur3_32Hash.
func activeByHashRing(topic string, consumers []*consumer) int {
	type point struct {
		hash uint32
		i    int
	}
	ring := make([]point, 0, len(consumers)*ringReplicas)
	for i, c := range consumers {
		for j := range ringReplicas {
			ring = append(ring, point{wire.Murmur3_32([]byte(c.name+strconv.Itoa(j)), 0) & 0x7fffffff, i})
		}
	}
	// Sorted by hash; of equal hashes the last placed wins, as upstream's map put overwrites.
	slices.SortStableFunc(ring, func(a, b point) int { return cmp.Compare(a.hash, b.hash) })
	dedup := ring[:0]
	for _, p := range ring {
		if n := len(dedup); n > 0 && dedup[n-1].hash == p.hash {
			dedup[n-1] = p
			continue
		}
		dedup = append(dedup, p)
	}
	h := wire.Murmur3_32([]byte(topic), 0) & 0x7fffffff
	k, _ := slices.BinarySearchFunc(dedup, h, func(p point, h uint32) int { return cmp.Compare(p.hash, h) })
	if k == len(dedup) {
		k = 0
	}
	return dedup[k].i
}

// switching reports whether dispatch waits for a change of active consumer to take effect,
// finishing the change once its time has come. Called with the topic's mutex held.
func (s *subscription) switching(now time.Time) bool {
	if s.switchAt.IsZero() {
		return false
	}
	if now.Before(s.switchAt) {
		s.nextDue = s.switchAt // Failover subscriptions hold no delayed messages of their own
		return true
	}
	s.finishSwitch()
	return false
}

// finishSwitch makes a change of active consumer take effect: what other consumers were given
// and did not acknowledge goes back for the active one, and every consumer of a Failover
// subscription is told whether it is the active one. Called with the topic's mutex held.
func (s *subscription) finishSwitch() {
	s.switchAt = time.Time{}
	for _, c := range s.consumers {
		if c != s.active {
			s.redeliverFrom(c, nil)
		}
	}
	if s.subType == pb.CommandSubscribe_Failover && s.active != nil {
		for _, c := range s.consumers {
			c.conn.sendActiveConsumerChange(c.id, c == s.active)
		}
	}
}
