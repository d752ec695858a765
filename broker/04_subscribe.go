package broker

import (
	"time"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// SUBSCRIBE → SUCCESS or ERROR. Exclusive, Shared, Failover and Key_Shared (AUTO_SPLIT and
// STICKY ranges); durable subscriptions start at the initial position, non-durable ones (readers)
// at start_message_id inclusive. force_topic_creation=false never creates the topic. The
// consumer's schema type is recorded (AUTO_CONSUME included, PIP-236). Nothing is delivered
// before the client's first FLOW, which it sends only after SUCCESS.

func (c *conn) handleSubscribe(cmd *pb.CommandSubscribe) error {
	reqID := cmd.GetRequestId()
	name, err := parseTopicName(cmd.GetTopic())
	if err != nil {
		c.sendError(reqID, pb.ServerError_InvalidTopicName, err.Error())
		return nil
	}
	if cmd.GetSubscription() == "" {
		c.sendError(reqID, pb.ServerError_NotAllowedError, "empty subscription name")
		return nil
	}
	if !c.may(OpConsume, name, cmd.GetSubscription()) {
		c.sendError(reqID, pb.ServerError_AuthorizationError, c.subscribeRefusal(name, cmd.GetSubscription()))
		return nil
	}
	if existing := c.consumer(cmd.GetConsumerId()); existing != nil {
		if existing.sub.topic.full == name.String() && existing.sub.name == cmd.GetSubscription() {
			c.sendSuccess(reqID)
		} else {
			c.sendError(reqID, pb.ServerError_ServiceNotReady, "Consumer is already present on the connection")
		}
		return nil
	}
	if serr := c.notServed(name); serr != nil { // another front end owns it (frontend.go)
		c.sendError(reqID, serr.code, serr.msg)
		return nil
	}
	t, serr := c.b.topics.get(name, cmd.GetForceTopicCreation(), cmd.GetTopicPurpose())
	if serr != nil {
		c.sendError(reqID, serr.code, serr.msg)
		return nil
	}
	cs := &consumer{
		id:       cmd.GetConsumerId(),
		name:     cmd.GetConsumerName(),
		conn:     c,
		topic:    t,
		priority: cmd.GetPriorityLevel(),
		since:    time.Now(),
		metadata: keyValues(cmd.GetMetadata()),
		// Upstream refuses it on Shared and Key_Shared subscriptions (compaction_read.go).
		readCompacted: cmd.GetReadCompacted(),
	}
	if serr := checkReadCompacted(t, cmd); serr != nil {
		c.sendError(reqID, serr.code, serr.msg)
		return nil
	}
	if cmd.ConsumerEpoch != nil {
		cs.epoch = ptr(cmd.GetConsumerEpoch())
	}
	// Registered first so that a FLOW right after SUCCESS finds it.
	c.mu.Lock()
	c.consumers[cs.id] = cs
	c.mu.Unlock()
	if serr := t.subscribe(subscribeRequest{cmd: cmd, consumer: cs}); serr != nil {
		c.forgetConsumer(cs)
		c.sendError(reqID, serr.code, serr.msg)
	}
	return nil
}
