package broker

import (
	"slices"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// subscribeRequest is what SUBSCRIBE asks of a topic.
type subscribeRequest struct {
	cmd      *pb.CommandSubscribe
	consumer *consumer
}

// subscribe attaches cs to its subscription (creating it if allowed) and answers SUCCESS while
// still holding the topic lock. A Failover subscription's ACTIVE_CONSUMER_CHANGE comes from its
// dispatcher once the failover delay has passed, after SUCCESS, when the official clients know
// the consumer (failover.go).
func (t *topic) subscribe(req subscribeRequest) *serverError {
	cmd, cs := req.cmd, req.consumer
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return errorf(pb.ServerError_ServiceNotReady, "topic %s is closing", t.full)
	}
	if cs.closed {
		// Its connection closed while the SUBSCRIBE was handled (conn.close).
		return errorf(pb.ServerError_ServiceNotReady, "consumer %s: connection closed", cs.name)
	}
	// As upstream, the subscription type and the subscribe rate are checked first (topic_limits.go,
	// subscribe_rate.go).
	if msg := t.subscriptionTypeRefusal(cmd.GetSubType()); msg != "" {
		return errorf(pb.ServerError_NotAllowedError, "%s", msg)
	}
	if !t.allowSubscribe(cs, t.b.now()) {
		return errorf(pb.ServerError_NotAllowedError, "Subscribe limited by subscribe rate limit per consumer.")
	}
	durable := cmd.GetDurable() && t.name.Persistent
	// Everything that can refuse the consumer is checked before anything changes: a refused
	// consumer leaves no subscription behind, as upstream.
	s := t.subs[cmd.GetSubscription()]
	switch {
	case s == nil:
		if cmd.GetDurable() && !t.b.autoSubscriptionCreation(t.name) {
			return errorf(pb.ServerError_SubscriptionNotFound, "Subscription does not exist")
		}
	case s.subType != cmd.GetSubType() && len(s.consumers) > 0:
		return errorf(pb.ServerError_ConsumerBusy, "Subscription is of different type")
	case s.subType == pb.CommandSubscribe_Exclusive && cmd.GetSubType() == pb.CommandSubscribe_Exclusive && len(s.consumers) > 0:
		return errorf(pb.ServerError_ConsumerBusy, "Exclusive consumer is already connected")
	}
	if serr := t.consumerLimit(s); serr != nil { // limits.go
		return serr
	}
	if s == nil {
		if serr := t.subscriptionLimit(); serr != nil {
			return serr
		}
	}
	if sch := cmd.GetSchema(); sch != nil {
		cs.schemaType, cs.hasSchema = sch.GetType(), true
		if serr := t.consumerSchema(sch); serr != nil {
			return serr
		}
	}
	if cmd.GetSubType() == pb.CommandSubscribe_Key_Shared {
		if meta := cmd.GetKeySharedMeta(); meta.GetKeySharedMode() == pb.KeySharedMode_STICKY {
			for _, r := range meta.GetHashRanges() {
				cs.hashRanges = append(cs.hashRanges, [2]int32{r.GetStart(), r.GetEnd()})
			}
			if len(cs.hashRanges) == 0 || (s != nil && s.selector != nil && s.selector.overlaps(cs.hashRanges)) {
				return errorf(pb.ServerError_ConsumerAssignError, "Key_Shared sticky hash ranges are empty or overlap another consumer's")
			}
		} else if s != nil && s.selector != nil {
			if msg := s.selector.full(); msg != "" {
				return errorf(pb.ServerError_ConsumerAssignError, "%s", msg)
			}
		}
	}
	if s == nil {
		s = t.unpark(cmd.GetSubscription(), durable) // reader_seek.go
	}
	if s == nil {
		s = newSubscription(t, cmd.GetSubscription(), cmd.GetSubType(), durable, t.startPosition(cmd))
		s.props = keyValues(cmd.GetSubscriptionProperties())
		if err := t.persistSubscription(s); err != nil {
			return errorf(pb.ServerError_MetadataError, "cannot store subscription %s: %v", s.name, err)
		}
		t.subs[s.name] = s
	} else if s.subType != cmd.GetSubType() {
		// Nobody is attached: the subscription takes the new consumer's type, as upstream.
		s.setType(cmd.GetSubType())
	}
	if s.selector != nil {
		s.selector.add(cs)
	}
	cs.sub = s
	if cs.readCompacted {
		s.attachCompacted(cmd)
	}
	s.consumers = append(s.consumers, cs)
	if !s.electActive() && s.subType == pb.CommandSubscribe_Failover && s.active != nil {
		// The active consumer stays: only the newcomer is told, at once and before its
		// SUCCESS, as upstream's dispatcher tells it from addConsumer (failover.go).
		cs.conn.sendActiveConsumerChange(cs.id, cs == s.active)
	}
	cs.conn.sendSuccess(cmd.GetRequestId())
	t.signal()
	return nil
}

// startPosition is where a new subscription's cursor starts. Called with t.mu held.
func (t *topic) startPosition(cmd *pb.CommandSubscribe) storage.Position {
	first := t.log.First()
	end := t.log.Next(t.log.Last())
	if id := cmd.GetStartMessageId(); id != nil && !cmd.GetDurable() {
		switch {
		case wire.IsEarliest(id):
			return first
		case wire.IsLatest(id):
			return end
		}
		p := storage.Position{Ledger: int64(id.GetLedgerId()), Entry: int64(id.GetEntryId())}
		// Inclusive: the client drops what it did not ask for.
		if p.Less(first) {
			return first
		}
		if end.Less(p) {
			return end
		}
		return p
	}
	if d := cmd.GetStartMessageRollbackDurationSec(); d > 0 {
		return t.log.FindByTime(time.Now().Add(-time.Duration(d) * time.Second).UnixMilli())
	}
	if cmd.GetInitialPosition() == pb.CommandSubscribe_Earliest {
		return first
	}
	return end
}

// ensureInitialSubscription creates the durable subscription sub at Earliest if missing (PIP-124).
func (t *topic) ensureInitialSubscription(sub string) *serverError {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.subs[sub]; ok {
		return nil
	}
	if serr := t.subscriptionLimit(); serr != nil { // limits.go
		return serr
	}
	if !t.b.autoSubscriptionCreation(t.name) {
		return errorf(pb.ServerError_NotAllowedError, "Could not create the initial subscription due to the auto subscription creation is not allowed.")
	}
	s := newSubscription(t, sub, pb.CommandSubscribe_Exclusive, true, t.log.First())
	if err := t.persistSubscription(s); err != nil {
		return errorf(pb.ServerError_MetadataError, "cannot store the initial subscription %s: %v", sub, err)
	}
	t.subs[sub] = s
	return nil
}

// removeConsumer detaches cs; its unacknowledged entries go back for redelivery.
func (t *topic) removeConsumer(cs *consumer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.detach(cs)
}

// detach is removeConsumer with t.mu held. A consumer its connection's close detaches before
// its SUBSCRIBE attached it is only marked closed: subscribe then refuses it.
func (t *topic) detach(cs *consumer) {
	if cs.closed {
		return
	}
	cs.closed = true
	s := cs.sub
	if s == nil {
		return
	}
	t.lastActive = t.b.now() // inactive_topics.go
	s.lastLeft = time.Now()
	s.consumers = slices.DeleteFunc(s.consumers, func(c *consumer) bool { return c == cs })
	if !s.durable && len(s.consumers) == 0 {
		// A reader's subscription goes with its last consumer: nothing to hand back. After a
		// seek it waits for the reader instead (reader_seek.go).
		if s.parkOnDetach && t.subs[s.name] == s {
			t.park(s)
		} else {
			delete(t.subs, s.name)
		}
		if s.selector != nil {
			s.selector.remove(cs)
		}
		t.signal()
		return
	}
	s.redeliverFrom(cs, nil)
	if s.selector != nil {
		s.selector.remove(cs)
	}
	if s.active == cs {
		s.active = nil
	}
	s.electActive()
	if !s.durable && len(s.consumers) == 0 {
		delete(t.subs, s.name)
	}
	t.signal()
}

// closeSubscriptionConsumers disconnects every consumer of s (after a seek, or before deleting
// it); allowReconnect=false closes them for good (PIP-139). Called with t.mu held.
func (t *topic) closeSubscriptionConsumers(s *subscription, allowReconnect bool, reason string) {
	for _, cs := range slices.Clone(s.consumers) {
		t.detach(cs)
		cs.conn.forgetConsumer(cs)
		cs.conn.sendCloseConsumer(cs.id, allowReconnect, reason)
	}
}

// consumerSchema applies PIP-236's rule to a subscribing consumer's schema: AUTO_CONSUME (and
// NONE) registers and checks nothing; on an idle topic (no schema, no producers, no consumers
// but AUTO_CONSUME ones, no data) the schema is registered; on a topic with a schema it must be
// compatible; an active topic without a schema refuses a typed consumer, as upstream does.
// Called with t.mu held.
func (t *topic) consumerSchema(sch *pb.Schema) *serverError {
	if sch.GetType() == pb.Schema_AutoConsume || sch.GetType() == pb.Schema_None {
		return nil
	}
	strategy := t.b.schemaStrategy(t.name)
	if t.b.schemas.has(t.name) {
		if err := t.b.schemas.check(t.name, sch, strategy); err != nil {
			return errorf(pb.ServerError_IncompatibleSchema, "%v", err)
		}
		return nil
	}
	if !t.schemaIdle() {
		return errorf(pb.ServerError_IncompatibleSchema,
			"Failed to add schema to an active topic with empty(BYTES) schema: new schema type %s", sch.GetType())
	}
	_, serr := t.b.schemas.add(t.name, sch, strategy, t.b.layers(t.name).AllowAutoUpdateSchema())
	return serr
}

// schemaIdle reports a topic with no producers, no consumers other than AUTO_CONSUME ones and
// no data. Called with t.mu held.
func (t *topic) schemaIdle() bool {
	if len(t.producers) > 0 || t.log.Entries() > 0 {
		return false
	}
	for _, s := range t.subs {
		for _, c := range s.consumers {
			if c.hasSchema && c.schemaType == pb.Schema_AutoConsume {
				continue
			}
			return false
		}
	}
	return true
}
