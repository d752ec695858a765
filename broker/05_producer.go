package broker

import (
	"time"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// PRODUCER → PRODUCER_SUCCESS or ERROR. Access modes Shared, Exclusive, ExclusiveWithFencing and
// WaitForExclusive (answered producer_ready=false, then ready=true with the same request id once
// the topic is free). Names are generated when the client has none. A non-empty
// initial_subscription_name (PIP-124) creates that durable subscription at Earliest first, if
// subscriptions may be auto-created; otherwise the producer fails with NotAllowedError. With
// authorization on, a producer naming one must also be allowed to consume (else
// AuthorizationError, as upstream), so the subscription is created only for such a role.
// Deduplication is off, so last_sequence_id is always −1.
//
// A PRODUCER for a producer id the connection already has is the client asking again (its
// first request timed out, or it reconnects on the same connection): it is answered under the
// new request's id, as upstream's ServerCnx does, with PRODUCER_SUCCESS while the producer is
// registered and ServiceNotReady while it waits for exclusive access.

func (c *conn) handleProducer(cmd *pb.CommandProducer) error {
	reqID := cmd.GetRequestId()
	name, err := parseTopicName(cmd.GetTopic())
	if err != nil {
		c.sendError(reqID, pb.ServerError_InvalidTopicName, err.Error())
		return nil
	}
	if !c.mayProduce(name, cmd.GetInitialSubscriptionName()) {
		c.sendError(reqID, pb.ServerError_AuthorizationError, "Client is not authorized to Produce")
		return nil
	}
	c.mu.Lock()
	existing, dup := c.producers[cmd.GetProducerId()]
	c.mu.Unlock()
	if dup {
		c.answerDuplicateProducer(existing, reqID)
		return nil
	}
	if serr := c.notServed(name); serr != nil { // another front end owns it (frontend.go)
		c.sendError(reqID, serr.code, serr.msg)
		return nil
	}
	t, serr := c.b.topics.get(name, true, cmd.GetTopicPurpose())
	if serr != nil {
		c.sendError(reqID, serr.code, serr.msg)
		return nil
	}
	if t.quotaExceeded() { // quota.go
		serr := t.quotaRefusal()
		c.sendError(reqID, serr.code, serr.msg)
		return nil
	}
	// As upstream, a namespace that requires encryption refuses producers that do not encrypt.
	if !cmd.GetEncrypted() && c.b.layers(name).EncryptionRequired() {
		c.sendError(reqID, pb.ServerError_MetadataError, "Encryption is required in "+name.String())
		return nil
	}
	p := &producer{
		id:        cmd.GetProducerId(),
		requestID: reqID,
		name:      cmd.GetProducerName(),
		conn:      c,
		topic:     t,
		mode:      cmd.GetProducerAccessMode(),
		userNamed: cmd.GetUserProvidedProducerName() && cmd.GetProducerName() != "",
		since:     time.Now(),
		metadata:  keyValues(cmd.GetMetadata()),
		// Only exclusive modes look at it, as upstream: the official Go client sends one for
		// Shared producers too.
		topicEpoch: cmd.TopicEpoch,
	}
	if p.name == "" {
		p.name = c.b.generatedProducerName()
	}
	ver, serr := c.b.clientSchema(name, cmd.GetSchema()) // schema.go
	if serr != nil {
		c.sendError(reqID, serr.code, serr.msg)
		return nil
	}
	p.schemaVer = ver
	// A producer without a schema gets no schema version, as upstream: the official Go client
	// caches the version against the producer's (nil) schema and fails on a version it did
	// not ask for.
	if sub := cmd.GetInitialSubscriptionName(); sub != "" && name.Persistent {
		if serr := t.ensureInitialSubscription(sub); serr != nil {
			c.sendError(reqID, serr.code, serr.msg)
			return nil
		}
	}
	p.lastSeq = t.lastSequenceID(p.name)
	c.mu.Lock()
	c.producers[p.id] = p
	delete(c.closedProducers, p.id)
	c.mu.Unlock()
	if serr := t.addProducer(p); serr != nil {
		c.forgetProducer(p)
		c.sendError(reqID, serr.code, serr.msg)
	}
	return nil
}

// answerDuplicateProducer answers, under reqID, a PRODUCER for the id of p, a producer the
// connection already has. Upstream answers with the producer's name and schema version only:
// last_sequence_id −1, ready, no topic epoch, whatever topic the request names.
func (c *conn) answerDuplicateProducer(p *producer, reqID uint64) {
	if !p.ready.Load() {
		c.sendError(reqID, pb.ServerError_ServiceNotReady, "Producer is already present on the connection")
		return
	}
	c.log.Info("PRODUCER for a producer id already registered; answered with the existing producer", "producer_id", p.id, "producer", p.name)
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_PRODUCER_SUCCESS.Enum(), ProducerSuccess: &pb.CommandProducerSuccess{
		RequestId:      &reqID,
		ProducerName:   &p.name,
		LastSequenceId: ptr(int64(-1)),
		SchemaVersion:  p.schemaVer,
		ProducerReady:  ptr(true),
	}}, nil)
}

func keyValues(kvs []*pb.KeyValue) map[string]string {
	if len(kvs) == 0 {
		return nil
	}
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = kv.GetValue()
	}
	return m
}
