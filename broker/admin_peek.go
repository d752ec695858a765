package broker

import (
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Reading entries without consuming them: upstream's peek (…/subscription/{sub}/position/{n}),
// get by id (…/ledger/{l}/entry/{e}) and examine (…/examinemessage). The entry is returned as
// stored (headers and payload as the producer sent them); broker/web decodes it.

// PeekEntry returns the n-th (from 1) unacknowledged entry of sub after its mark-delete
// position. ErrNotFound when there are fewer; ErrNotAllowed on a partitioned topic.
//
// A subscription that does not exist is created at the earliest position first, as upstream's
// peek does, when the namespace allows automatic subscription creation; otherwise the peek is
// ErrPreconditionFailed. (The TUI never peeks through a subscription it has not seen in the
// topic's stats, so it never creates one this way.)
func (b *Broker) PeekEntry(tname, sub string, n int64) (storage.Entry, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return storage.Entry{}, err
	}
	if n < 1 {
		return storage.Entry{}, adminErr(ErrPreconditionFailed, "Position must be at least 1")
	}
	t, err := b.topicFor(name, "Peek messages")
	if err != nil {
		return storage.Entry{}, err
	}
	if err := b.peekSubscription(t, sub); err != nil {
		return storage.Entry{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.subs[sub]
	if !ok { // deleted between the two
		return storage.Entry{}, adminErr(ErrNotFound, "Subscription not found")
	}
	var found storage.Entry
	ok = false
	s.scanBacklogUntil(func(e storage.Entry) bool {
		n--
		if n == 0 {
			found, ok = e.Copy(), true // the scan releases e
			return false
		}
		return true
	})
	if !ok {
		return storage.Entry{}, adminErr(ErrNotFound, "Message not found")
	}
	return found, nil
}

// EntryAt returns the entry at ledger:entry.
func (b *Broker) EntryAt(tname string, ledger, entry int64) (storage.Entry, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return storage.Entry{}, err
	}
	t, err := b.topicFor(name, "Get message by id")
	if err != nil {
		return storage.Entry{}, err
	}
	e, ok := t.log.Get(storage.Position{Ledger: ledger, Entry: entry})
	if !ok {
		return storage.Entry{}, adminErr(ErrNotFound, "Message id %d:%d not found", ledger, entry)
	}
	return e, nil
}

// ExamineEntry returns the n-th (from 1) entry counted from the oldest stored entry, or from
// the newest when latest is set.
func (b *Broker) ExamineEntry(tname string, latest bool, n int64) (storage.Entry, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return storage.Entry{}, err
	}
	if n < 1 {
		return storage.Entry{}, adminErr(ErrPreconditionFailed, "Invalid value for message position: %d", n)
	}
	t, err := b.topicFor(name, "Examine messages")
	if err != nil {
		return storage.Entry{}, err
	}
	p, found := nthEntry(t.log.Ledgers(), latest, n)
	e, ok := t.log.Get(p)
	if !found || !ok {
		return storage.Entry{}, adminErr(ErrNotFound, "Could not examine messages due to the total message count is smaller than the position %d", n)
	}
	return e, nil
}

// nthEntry is the position of the nth stored entry (from 1) counted from the oldest, or from
// the newest when latest, across the log's ledgers.
func nthEntry(ledgers []storage.LedgerInfo, latest bool, n int64) (storage.Position, bool) {
	if latest {
		for i := len(ledgers) - 1; i >= 0; i-- {
			l := ledgers[i]
			if n <= l.Entries {
				return storage.Position{Ledger: l.ID, Entry: l.First + l.Entries - n}, true
			}
			n -= l.Entries
		}
		return storage.Position{}, false
	}
	for _, l := range ledgers {
		if n <= l.Entries {
			return storage.Position{Ledger: l.ID, Entry: l.First + n - 1}, true
		}
		n -= l.Entries
	}
	return storage.Position{}, false
}

// peekSubscription makes sure sub exists on t for a peek: created at the earliest position when
// automatic subscription creation is allowed, as upstream creates it.
func (b *Broker) peekSubscription(t *topic, sub string) error {
	t.mu.Lock()
	_, ok := t.subs[sub]
	t.mu.Unlock()
	if ok {
		return nil
	}
	if !t.name.Persistent {
		return adminErr(ErrNotFound, "Subscription not found")
	}
	if sub == "" {
		return adminErr(ErrPreconditionFailed, "Subscription name must not be empty")
	}
	if !b.autoSubscriptionCreation(t.name) {
		return adminErr(ErrPreconditionFailed, "Subscription %s does not exist and the auto subscription creation is not allowed", sub)
	}
	if err := t.createSubscription(sub, adminapi.MessageID{LedgerID: -1, EntryID: -1}); err != nil {
		return err
	}
	b.log.Info("subscription created by a peek", "topic", t.full, "subscription", sub)
	t.signal()
	return nil
}
