package broker

import (
	"maps"
	"time"
)

// A topic's properties, as upstream's …/properties: stored in the topic's record in the
// metadata store (a partitioned topic's in its base name's record), mirrored in a live topic's
// t.props.

// TopicProperties returns a topic's properties (a partitioned topic's for its base name).
func (b *Broker) TopicProperties(tname string) (map[string]string, error) {
	out := map[string]string{}
	err := b.editTopicRecord(tname, func(rec *topicRecord) bool {
		maps.Copy(out, rec.Properties)
		return false
	})
	return out, err
}

// UpdateTopicProperties merges props into a topic's properties.
func (b *Broker) UpdateTopicProperties(tname string, props map[string]string) error {
	return b.editTopicRecord(tname, func(rec *topicRecord) bool {
		if rec.Properties == nil {
			rec.Properties = map[string]string{}
		}
		maps.Copy(rec.Properties, props)
		return true
	})
}

// RemoveTopicProperty removes one property.
func (b *Broker) RemoveTopicProperty(tname, key string) error {
	return b.editTopicRecord(tname, func(rec *topicRecord) bool {
		delete(rec.Properties, key)
		return true
	})
}

// editTopicRecord runs fn on a copy of the stored record of an existing topic (a partitioned
// topic's base record) and stores it when fn says so. A live topic's properties (t.props) are
// updated under its mutex; partitioned base records under topics.mu.
func (b *Broker) editTopicRecord(tname string, fn func(*topicRecord) bool) error {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return err
	}
	full := name.String()
	edit := func(live *topic) error {
		rec, found, err := b.loadTopicRecord(full)
		if err != nil {
			return adminErr(ErrPreconditionFailed, "cannot read the metadata of %s: %v", full, err)
		}
		if !found {
			rec.Created = time.Now().UnixMilli()
			if live != nil {
				rec.Created = millis(live.created)
			}
		}
		rec.Properties = maps.Clone(rec.Properties)
		if !fn(&rec) {
			return nil
		}
		if err := b.storeTopicRecord(full, rec); err != nil {
			return adminErr(ErrPreconditionFailed, "cannot store the metadata of %s: %v", full, err)
		}
		if live != nil {
			live.props = rec.Properties
		}
		return nil
	}
	r := b.topics
	r.mu.Lock()
	if _, ok := r.partitioned[full]; ok {
		defer r.mu.Unlock()
		return edit(nil)
	}
	r.mu.Unlock()
	t, err := b.topicFor(name, "")
	if err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return edit(t)
}
