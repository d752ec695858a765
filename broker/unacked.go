package broker

// Unacknowledged message limits, as upstream's on Shared and Key_Shared subscriptions: a
// consumer given its maxUnackedMessagesOnConsumer (the topic's policy, else its namespace's
// maxUnackedMessagesPerConsumer, else the broker's) of messages it has not acknowledged gets
// no more until it has acknowledged half of them; a subscription whose consumers together hold
// its maxUnackedMessagesOnSubscription stops dispatching until they are down to half. The
// delivery that reaches a limit goes whole (a batch counts its messages). Stats report
// blockedConsumerOnUnackedMsgs and blockedSubscriptionOnUnackedMsgs. Exclusive and Failover
// subscriptions are bounded by their consumer's permits alone, as upstream.

// countUnacked adds n delivered messages to cs's count and blocks cs, or its subscription, at
// a limit. Called with the topic's mutex held.
func (s *subscription) countUnacked(cs *consumer, n int64) {
	cs.unacked += n
	if !s.shared() {
		return
	}
	lim := s.topic.limits()
	if l := int64(lim.maxUnackedConsumer); l > 0 && cs.unacked >= l {
		cs.blockedOnUnacked = true
	}
	if l := int64(lim.maxUnackedSubscription); l > 0 && s.unacked() >= l {
		s.blockedOnUnacked = true
	}
}

// unacked is what s's consumers hold unacknowledged together.
func (s *subscription) unacked() int64 {
	var n int64
	for _, c := range s.consumers {
		n += max(c.unacked, 0)
	}
	return n
}

// consumerBlocked reports whether c holds too many unacknowledged messages to be given more,
// unblocking it once it is down to half its limit (or the limit went). Called with the topic's
// mutex held, by every dispatch: acknowledgements signal one.
func (s *subscription) consumerBlocked(c *consumer) bool {
	if !c.blockedOnUnacked {
		return false
	}
	if l := int64(s.topic.limits().maxUnackedConsumer); s.shared() && l > 0 && c.unacked > l/2 {
		return true
	}
	c.blockedOnUnacked = false
	return false
}

// unackedBlocked reports whether s holds too many unacknowledged messages to dispatch, as
// consumerBlocked for the subscription's limit.
func (s *subscription) unackedBlocked() bool {
	if !s.blockedOnUnacked {
		return false
	}
	if l := int64(s.topic.limits().maxUnackedSubscription); s.shared() && l > 0 && s.unacked() > l/2 {
		return true
	}
	s.blockedOnUnacked = false
	return false
}
