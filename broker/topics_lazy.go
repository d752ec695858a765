package broker

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Topics open on first use, as upstream loads them: at start the broker only learns which
// topics storage holds (one directory listing and the cursor keys), so that it is ready without
// reading any log, whatever is stored. A stored topic is opened — its log recovered, its
// durable subscriptions restored — by the first PRODUCER, SUBSCRIBE, LOOKUP or admin call that
// names it. Listings show stored topics without opening them; stats, message TTL and retention
// see open topics only, as upstream's do (docs/protocol.md).

// loadStoredNames records the topics storage holds, to be opened on first use: those with a
// log and those with a durable cursor. Called before the broker serves anything.
func (r *topicRegistry) loadStoredNames() error {
	logs, err := r.b.store.Logs()
	if err != nil {
		return err
	}
	var bad []string
	add := func(full string) {
		if _, ok := r.stored[full]; ok {
			return
		}
		name, err := parseTopicName(full)
		if err != nil {
			bad = append(bad, full)
			return
		}
		r.stored[full] = name
		r.index(full, name)
	}
	for _, full := range logs {
		add(full)
	}
	err = r.b.store.Metadata().Scan(storage.BucketCursors, "", func(key string, _ []byte) bool {
		if full, _, ok := strings.Cut(key, "\x00"); ok {
			add(full)
		}
		return true
	})
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		// Damaged names must not stop the broker: serve what can be served, say what cannot.
		r.b.log.Error("some stored topics have names that do not parse; they are not served", "topics", bad)
	}
	return nil
}

// knownLocked reports whether full is an open topic or a stored one not opened yet. Called
// with r.mu held.
func (r *topicRegistry) knownLocked(full string) bool {
	if _, ok := r.topics[full]; ok {
		return true
	}
	_, ok := r.stored[full]
	return ok
}

// liveLocked returns the topic named name if it exists, opening it first if it is stored but
// not open yet. Called with r.mu held.
func (r *topicRegistry) liveLocked(name naming.Topic) (*topic, bool, *serverError) {
	full := name.String()
	if t, ok := r.topics[full]; ok {
		return t, true, nil
	}
	if _, ok := r.stored[full]; !ok {
		return nil, false, nil
	}
	t, serr := r.openLocked(name)
	if serr != nil {
		return nil, true, serr
	}
	return t, true, nil
}

// restoreCursors brings back t's durable subscriptions from the store. Called while t is being
// opened, before anyone else can reach it.
func (b *Broker) restoreCursors(t *topic) error {
	var firstErr error
	err := b.store.Metadata().Scan(storage.BucketCursors, cursorKey(t.full, ""), func(key string, v []byte) bool {
		sub := key[len(t.full)+1:]
		var rec cursorRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("cursor %s of %s: %w", sub, t.full, err)
			}
			return true
		}
		subType := pb.CommandSubscribe_SubType(pb.CommandSubscribe_SubType_value[rec.Type])
		t.locked(func() {
			s := newSubscription(t, sub, subType, true, t.log.First())
			s.restore(rec)
			t.subs[sub] = s
		})
		return true
	})
	if err != nil {
		return err
	}
	return firstErr
}

// storedPurposeLocked is the purpose property a stored, unopened topic was created with, read
// from its metadata without opening its log ("" if none or unreadable).
func (r *topicRegistry) storedPurposeLocked(full string) string {
	rec, ok, err := r.b.loadTopicRecord(full)
	if err != nil || !ok {
		return ""
	}
	return rec.Properties[PropertyTopicPurpose]
}

// LoadTopic opens the topic named tname if storage holds it and it is not open yet, as a
// lookup does upstream; it creates nothing, and a name that is not stored is no error (a lookup
// answers for topics that do not exist yet).
func (b *Broker) LoadTopic(tname string) {
	name, err := parseTopicName(tname)
	if err != nil {
		return
	}
	b.topics.load(name)
}

// load opens name if it is stored and not open yet.
func (r *topicRegistry) load(name naming.Topic) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, _, serr := r.liveLocked(name); serr != nil {
		// The PRODUCER or SUBSCRIBE that follows gets the error; say here why.
		r.b.log.Warn("cannot open a stored topic on lookup", "topic", name.String(), "err", serr.msg)
	}
}
