package broker

import (
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// A topic's end, as upstream's …/lastMessageId, …/messageid/{timestamp} and …/terminate.

// LastMessageID is the id of a topic's last entry (entry −1 when it has none).
func (b *Broker) LastMessageID(tname string) (adminapi.MessageID, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return adminapi.MessageID{}, err
	}
	t, err := b.topicFor(name, "GetLastMessageId")
	if err != nil {
		return adminapi.MessageID{}, err
	}
	return b.messageID(t, t.log.Last()), nil
}

func (b *Broker) messageID(t *topic, p storage.Position) adminapi.MessageID {
	return adminapi.MessageID{LedgerID: p.Ledger, EntryID: p.Entry, PartitionIndex: t.name.Partition}
}

// MessageIDByTime returns the first entry published at or after ms, ErrNotFound if none.
func (b *Broker) MessageIDByTime(tname string, ms int64) (adminapi.MessageID, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return adminapi.MessageID{}, err
	}
	t, err := b.topicFor(name, "Get message ID by timestamp")
	if err != nil {
		return adminapi.MessageID{}, err
	}
	p := t.log.FindByTime(ms)
	if _, ok := t.log.Get(p); !ok {
		return adminapi.MessageID{}, adminErr(ErrNotFound, "Message ID not found")
	}
	return b.messageID(t, p), nil
}

// TerminateTopic marks a topic terminated: no more messages may be published. As upstream,
// its producers are closed with reconnect allowed, and their reconnection, as any new
// producer, is refused with TopicTerminatedError, on which the official clients fail their
// pending sends and give up the producer. It returns the last message id.
func (b *Broker) TerminateTopic(tname string) (adminapi.MessageID, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return adminapi.MessageID{}, err
	}
	if _, err := b.topicFor(name, "Termination of a partitioned topic"); err != nil {
		return adminapi.MessageID{}, err
	}
	err = b.editTopicRecord(tname, func(rec *topicRecord) bool {
		rec.Terminated = true
		return true
	})
	if err != nil {
		return adminapi.MessageID{}, err
	}
	t, err := b.topicFor(name, "")
	if err != nil {
		return adminapi.MessageID{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	a, unlock := b.adminLocked()
	a.terminated[t.full] = true
	unlock()
	b.closeTopicProducers(t, true, "topic "+t.full+" was terminated")
	t.signal() // consumers already at the end are told so (REACHED_END_OF_TOPIC, where taken)
	return b.messageID(t, t.log.Last()), nil
}
