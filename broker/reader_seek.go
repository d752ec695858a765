package broker

import "time"

// A seek on a reader (a non-durable subscription) survives the reconnect it causes, as
// upstream's: SEEK closes the subscription's consumers, and a reader's subscription goes with
// its last consumer, but upstream keeps its cursor, at the position sought, when the consumer
// was closed by the seek, and the reader's SUBSCRIBE then takes that cursor whatever start
// message id it sends. The official Go client sends its original start after a seek by time,
// so without this a reader would read again from its start.
//
// Until the reader comes back the subscription is parked: out of the topic's subscriptions
// (stats and the admin API do not list it, as upstream does not) but holding data back from
// trimming. Upstream keeps such a cursor until the topic is unloaded; a parked subscription
// nobody resubscribes to goes after parkedGrace, at the next retention check.

// parkedGrace is how long a parked subscription waits for its reader.
const parkedGrace = time.Minute

// park moves s, which has just lost its last consumer to a seek, out of t's subscriptions.
// Called with t.mu held.
func (t *topic) park(s *subscription) {
	delete(t.subs, s.name)
	s.parkOnDetach = false
	s.parkedAt = time.Now()
	if t.parked == nil {
		t.parked = make(map[string]*subscription)
	}
	t.parked[s.name] = s
}

// unpark returns the parked subscription name, back among t's subscriptions, or nil. Only a
// non-durable SUBSCRIBE takes it. Called with t.mu held.
func (t *topic) unpark(name string, durable bool) *subscription {
	s := t.parked[name]
	if s == nil || durable {
		return nil
	}
	delete(t.parked, name)
	t.subs[name] = s
	return s
}

// expireParked drops the subscriptions parked for longer than parkedGrace. Called with t.mu
// held.
func (t *topic) expireParked(now time.Time) {
	for name, s := range t.parked {
		if now.Sub(s.parkedAt) > parkedGrace {
			delete(t.parked, name)
		}
	}
}
