package broker

import (
	"fmt"
	"net"
	"time"

	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Limits on what clients can make the broker hold, under upstream's broker.conf names and with
// upstream's answers (Config documents each; 0 is no limit, upstream's default). The producer,
// consumer and subscription limits may be overridden by namespace and topic policies
// (admin_policies.go):
//
//   - brokerMaxConnections, brokerMaxConnectionsPerIp: a connection over either is answered
//     ERROR NotAllowedError (request id −1, as upstream's ServerCnx.channelActive) and closed
//     before anything is read from it.
//   - maxProducersPerTopic: PRODUCER is answered ProducerBusy "Topic '…' reached max producers
//     limit"; producers queued for exclusive access count.
//   - maxConsumersPerTopic, maxConsumersPerSubscription: SUBSCRIBE is answered ConsumerBusy.
//   - maxSubscriptionsPerTopic: a SUBSCRIBE (or PIP-124 initial subscription, or admin create)
//     that would add a subscription is refused NotAllowedError.
//
// The handshake has a deadline too: a connection that has not completed CONNECT within
// keepAliveIntervalSeconds is closed (conn.keepAlive).

func (c *Config) validateLimits() error {
	for _, l := range []struct {
		key string
		v   int
	}{
		{"brokerMaxConnections", c.BrokerMaxConnections},
		{"brokerMaxConnectionsPerIp", c.BrokerMaxConnectionsPerIP},
		{"maxProducersPerTopic", c.MaxProducersPerTopic},
		{"maxConsumersPerTopic", c.MaxConsumersPerTopic},
		{"maxConsumersPerSubscription", c.MaxConsumersPerSubscription},
		{"maxSubscriptionsPerTopic", c.MaxSubscriptionsPerTopic},
		{"managedLedgerMaxUnackedRangesToPersist", c.ManagedLedgerMaxUnackedRangesToPersist},
		{"maxConcurrentHttpRequests", c.MaxConcurrentHTTPRequests},
		{"maxHttpServerConnections", c.MaxHTTPServerConnections},
	} {
		if l.v < 0 {
			return fmt.Errorf("broker: %s %d: must not be negative (0: no limit)", l.key, l.v)
		}
	}
	if c.MemoryLimit < 0 {
		return fmt.Errorf("broker: memory limit %d: must not be negative (0: none)", c.MemoryLimit)
	}
	switch c.BacklogQuotaDefaultRetentionPolicy {
	case "":
		c.BacklogQuotaDefaultRetentionPolicy = policy.QuotaProducerRequestHold
	case policy.QuotaProducerRequestHold, policy.QuotaProducerException, policy.QuotaConsumerBacklogEviction:
	default:
		return fmt.Errorf("broker: backlogQuotaDefaultRetentionPolicy %q: want %s, %s or %s", c.BacklogQuotaDefaultRetentionPolicy,
			policy.QuotaProducerRequestHold, policy.QuotaProducerException, policy.QuotaConsumerBacklogEviction)
	}
	// A Config built by hand rather than from DefaultConfig gets the defaults.
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{
		{&c.HTTPReadHeaderTimeout, 10 * time.Second},
		{&c.HTTPReadTimeout, 30 * time.Second},
		{&c.HTTPWriteTimeout, time.Minute},
		{&c.HTTPIdleTimeout, 2 * time.Minute},
	} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	// The write timeout runs from the end of a request's header, through its wait for a slot
	// (up to the read timeout): one no longer would cut queued requests short.
	if c.HTTPWriteTimeout <= c.HTTPReadTimeout {
		return fmt.Errorf("broker: httpWriteTimeoutSeconds (%s) must be longer than httpReadTimeoutSeconds (%s): a request may wait that long for a slot before it is answered",
			c.HTTPWriteTimeout, c.HTTPReadTimeout)
	}
	return nil
}

// connLimits counts open connections per remote IP. Guarded by Broker.mu.
type connLimits struct {
	perIP map[string]int
}

// admitLocked registers c, or returns why it may not stay. Called with b.mu held.
func (b *Broker) admitLocked(c *conn) string {
	if limit := b.cfg.BrokerMaxConnections; limit > 0 && len(b.conns) >= limit {
		return "Reached the maximum number of connections"
	}
	if limit := b.cfg.BrokerMaxConnectionsPerIP; limit > 0 && b.limits.perIP[c.ip] >= limit {
		return "Reached the maximum number of connections on address " + c.ip
	}
	b.conns[c] = struct{}{}
	if b.limits.perIP == nil {
		b.limits.perIP = make(map[string]int)
	}
	b.limits.perIP[c.ip]++
	return ""
}

// forgetLocked undoes admitLocked. Called with b.mu held.
func (b *Broker) forgetLocked(c *conn) {
	if _, ok := b.conns[c]; !ok {
		return
	}
	delete(b.conns, c)
	if b.limits.perIP[c.ip]--; b.limits.perIP[c.ip] <= 0 {
		delete(b.limits.perIP, c.ip)
	}
}

// refuseConn answers a connection over a limit as upstream does and closes it. The client may
// not be reading: the write has a deadline, and runs off the accept loop.
func (b *Broker) refuseConn(nc net.Conn, reason string) {
	b.log.Warn("refusing a connection", "remote", nc.RemoteAddr().String(), "reason", reason)
	frame, err := wire.AppendCommand(nil, &pb.BaseCommand{
		Type: pb.BaseCommand_ERROR.Enum(),
		Error: &pb.CommandError{
			RequestId: ptr(^uint64(0)), // upstream's −1
			Error:     pb.ServerError_NotAllowedError.Enum(),
			Message:   &reason,
		},
	}, nil)
	go func() {
		defer nc.Close()
		defer b.recoverPanic("refusing a connection", nil)
		if err == nil {
			nc.SetWriteDeadline(time.Now().Add(time.Second))
			nc.Write(frame)
		}
	}()
}

// remoteIP is the host part of a remote address, what brokerMaxConnectionsPerIp counts by.
func remoteIP(addr net.Addr) string {
	host, _, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	return host
}

// producerLimit refuses one producer more than maxProducersPerTopic. Called with t.mu held.
func (t *topic) producerLimit() *serverError {
	if limit := t.b.layers(t.name).MaxProducers(); limit > 0 && len(t.producers)+len(t.waiting) >= limit {
		return errorf(pb.ServerError_ProducerBusy, "Topic '%s' reached max producers limit", t.full)
	}
	return nil
}

// consumerLimit refuses a consumer over maxConsumersPerTopic or maxConsumersPerSubscription
// (s is nil for a subscription yet to be created). Called with t.mu held.
func (t *topic) consumerLimit(s *subscription) *serverError {
	if limit := t.b.layers(t.name).MaxConsumers(); limit > 0 {
		n := 0
		for _, s := range t.subs {
			n += len(s.consumers)
		}
		if n >= limit {
			return errorf(pb.ServerError_ConsumerBusy, "Topic reached max consumers limit")
		}
	}
	if limit := t.b.layers(t.name).MaxConsumersPerSubscription(); limit > 0 && s != nil && len(s.consumers) >= limit {
		return errorf(pb.ServerError_ConsumerBusy, "Subscription reached max consumers limit")
	}
	return nil
}

// subscriptionLimit refuses a subscription more than maxSubscriptionsPerTopic. Called with
// t.mu held.
func (t *topic) subscriptionLimit() *serverError {
	if limit := t.b.layers(t.name).MaxSubscriptions(); limit > 0 && len(t.subs) >= limit {
		return errorf(pb.ServerError_NotAllowedError, "Exceed the maximum number of subscriptions of the topic: %s", t.full)
	}
	return nil
}
