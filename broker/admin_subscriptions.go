package broker

import (
	"sort"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Subscriptions, as upstream's …/subscriptions and …/subscription/{sub}/...: list, create at
// a message id, delete, skip, clear backlog, expire and reset the cursor. On a partitioned
// topic each operation applies to every partition, as upstream. Moving a cursor closes the
// subscription's consumers (reconnect allowed) so they start again from the new position, as
// a SEEK does.

// Subscriptions lists a topic's subscriptions (all partitions' for a partitioned topic).
func (b *Broker) Subscriptions(tname string) ([]string, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return nil, err
	}
	ts, err := b.targets(name)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, t := range ts {
		t.mu.Lock()
		for s := range t.subs {
			seen[s] = true
		}
		t.mu.Unlock()
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out, nil
}

// position turns an admin message id into the position a cursor starts at on t (inclusive),
// clamped to what the log holds. Called with t.mu held.
func (t *topic) position(id adminapi.MessageID) storage.Position {
	first, end := t.log.First(), t.log.Next(t.log.Last())
	switch {
	case isEarliest(id):
		return first
	case isLatest(id):
		return end
	}
	p := storage.Position{Ledger: id.LedgerID, Entry: id.EntryID}
	if p.Less(first) {
		return first
	}
	if end.Less(p) {
		return end
	}
	return p
}

// CreateSubscription creates a durable subscription starting at id (inclusive; earliest and
// latest as upstream encodes them).
func (b *Broker) CreateSubscription(tname, sub string, id adminapi.MessageID) error {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return err
	}
	if sub == "" {
		return adminErr(ErrPreconditionFailed, "Subscription name must not be empty")
	}
	if !name.Persistent {
		return adminErr(ErrNotAllowed, "Create subscription on non-persistent topic can only be done through client")
	}
	ts, err := b.targets(name)
	if err != nil {
		return err
	}
	for _, t := range ts {
		t.mu.Lock()
		_, exists := t.subs[sub]
		t.mu.Unlock()
		if exists {
			return adminErr(ErrAlreadyExists, "Subscription already exists for topic")
		}
	}
	for _, t := range ts {
		if err := t.createSubscription(sub, id); err != nil {
			return err
		}
		t.signal()
	}
	return nil
}

// createSubscription is CreateSubscription on one topic (or partition).
func (t *topic) createSubscription(sub string, id adminapi.MessageID) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.subs[sub]; ok {
		return nil
	}
	if serr := t.subscriptionLimit(); serr != nil { // limits.go
		return adminErr(ErrPreconditionFailed, "%s", serr.msg)
	}
	s := newSubscription(t, sub, pb.CommandSubscribe_Exclusive, true, t.position(id))
	if err := t.persistSubscription(s); err != nil {
		return adminErr(ErrPreconditionFailed, "cannot store subscription %s: %v", sub, err)
	}
	t.subs[sub] = s
	return nil
}

// withSubscription runs fn on sub of every target topic, under that topic's mutex.
func (b *Broker) withSubscription(tname, sub string, fn func(t *topic, s *subscription) error) error {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return err
	}
	ts, err := b.targets(name)
	if err != nil {
		return err
	}
	found := false
	for _, t := range ts {
		err := func() error {
			t.mu.Lock()
			defer t.mu.Unlock()
			s, ok := t.subs[sub]
			if !ok {
				return nil
			}
			found = true
			return fn(t, s)
		}()
		if err != nil {
			return err
		}
		t.signal()
	}
	if !found {
		return adminErr(ErrNotFound, "Subscription not found")
	}
	return nil
}

// DeleteSubscription deletes sub. Without force it fails with ErrPreconditionFailed while
// consumers are connected; with force they are closed first.
func (b *Broker) DeleteSubscription(tname, sub string, force bool) error {
	if !force {
		err := b.withSubscription(tname, sub, func(t *topic, s *subscription) error {
			if len(s.consumers) > 0 {
				return adminErr(ErrPreconditionFailed, "Subscription has active connected consumers")
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return b.withSubscription(tname, sub, func(t *topic, s *subscription) error {
		if len(s.consumers) > 0 && !force {
			return adminErr(ErrPreconditionFailed, "Subscription has active connected consumers")
		}
		t.closeSubscriptionConsumers(s, true, "subscription "+s.name+" was deleted")
		t.removeSubscription(s)
		return nil
	})
}

// SkipMessages acknowledges the next n unacknowledged entries of sub.
func (b *Broker) SkipMessages(tname, sub string, n int64) error {
	if n <= 0 {
		return adminErr(ErrPreconditionFailed, "Skip messages count must be positive")
	}
	return b.withSubscription(tname, sub, func(t *topic, s *subscription) error {
		left := n
		var skip []storage.Position
		s.scanBacklogUntil(func(e storage.Entry) bool {
			skip = append(skip, e.Pos)
			left--
			return left > 0
		})
		for _, p := range skip {
			s.ackWhole(p)
		}
		s.advanceMarkDelete()
		if s.readPos.Less(t.log.Next(s.markDelete)) {
			s.readPos = t.log.Next(s.markDelete)
		}
		return nil
	})
}

// ClearBacklog acknowledges everything in sub.
func (b *Broker) ClearBacklog(tname, sub string) error {
	return b.withSubscription(tname, sub, func(t *topic, s *subscription) error {
		if last := t.log.Last(); s.markDelete.Less(last) {
			s.ackCumulative(last, nil)
		}
		return nil
	})
}

// ExpireMessages acknowledges sub's entries published more than seconds ago.
func (b *Broker) ExpireMessages(tname, sub string, seconds int64) error {
	return b.withSubscription(tname, sub, func(t *topic, s *subscription) error {
		now := b.now()
		s.expire(now.Add(-time.Duration(seconds)*time.Second), now)
		return nil
	})
}

// ExpireAllSubscriptions expires messages older than seconds on every subscription.
func (b *Broker) ExpireAllSubscriptions(tname string, seconds int64) error {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return err
	}
	ts, err := b.targets(name)
	if err != nil {
		return err
	}
	now := b.now()
	before := now.Add(-time.Duration(seconds) * time.Second)
	for _, t := range ts {
		t.locked(func() {
			for _, s := range t.subs {
				s.expire(before, now)
			}
		})
		t.signal()
	}
	return nil
}

// ResetCursorByTime moves sub to the first entry published at or after ms.
func (b *Broker) ResetCursorByTime(tname, sub string, ms int64) error {
	return b.withSubscription(tname, sub, func(t *topic, s *subscription) error {
		s.resetTo(t.log.FindByTime(ms))
		t.closeSubscriptionConsumers(s, true, "subscription was reset by the admin API")
		return nil
	})
}

// ResetCursorToID moves sub so that id is the next entry delivered.
func (b *Broker) ResetCursorToID(tname, sub string, id adminapi.MessageID) error {
	return b.withSubscription(tname, sub, func(t *topic, s *subscription) error {
		if id.PartitionIndex >= 0 && t.name.Partition >= 0 && id.PartitionIndex != t.name.Partition && !isEarliest(id) && !isLatest(id) {
			return nil // the id names another partition
		}
		s.resetTo(t.position(id))
		t.closeSubscriptionConsumers(s, true, "subscription was reset by the admin API")
		return nil
	})
}
