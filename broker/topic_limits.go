package broker

import (
	"slices"
	"strconv"
	"time"

	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// What a topic's SENDs, SUBSCRIBEs and dispatchers read of its policies, resolved by
// broker/policy over the topic's layers and kept on the topic until any policy changes (the
// admin state's version): a SEND pays one atomic load for them, not the admin lock. The rate
// limiters they configure keep their tokens across resolutions that do not change the rate.

// topicLimits are a topic's resolved policies. Guarded by the topic's mutex.
type topicLimits struct {
	version  uint64 // the policy version they were resolved at
	resolved bool

	maxMessageSize         int // the topic's own, below the broker's (0: none)
	delayed                adminapi.DelayedDeliveryPolicies
	encryptionRequired     bool
	maxUnackedConsumer     int
	maxUnackedSubscription int
	pauseOnAckState        bool
	subTypes               []string
	subDispatchRate        adminapi.DispatchRate
	subDispatchRates       map[string]adminapi.DispatchRate // single subscriptions' own
	subscribeRate          adminapi.SubscribeRate
	dedupSnapshotInterval  time.Duration
}

// limits returns t's resolved policies, resolving them again when a policy changed since.
// Called with t.mu held.
func (t *topic) limits() *topicLimits {
	v := t.b.admin.version.Load()
	if t.lim.resolved && t.lim.version == v {
		return &t.lim
	}
	l := t.b.layers(t.name)
	now := t.b.now()
	t.lim = topicLimits{
		version:                v,
		resolved:               true,
		maxMessageSize:         l.MaxMessageSize(t.b.cfg.MaxMessageSize),
		delayed:                l.DelayedDelivery(),
		encryptionRequired:     l.EncryptionRequired(),
		maxUnackedConsumer:     l.MaxUnackedPerConsumer(),
		maxUnackedSubscription: l.MaxUnackedPerSubscription(),
		pauseOnAckState:        l.DispatcherPauseOnAckStatePersistent(),
		subTypes:               l.SubscriptionTypesEnabled(),
		subDispatchRate:        l.SubscriptionDispatchRate(),
		subDispatchRates:       l.SubscriptionDispatchRates(),
		subscribeRate:          l.SubscribeRate(),
		dedupSnapshotInterval:  time.Duration(l.DeduplicationSnapshotInterval()) * time.Second,
	}
	t.pub.set(l.PublishRate(), now)
	t.dispatchLimit.set(l.DispatchRate(), now)
	t.group = t.b.groupOf(l.Namespace, now)
	if !t.pub.limited() && !t.group.publishLimited() {
		t.releasePublishers(now) // the rates are gone: nothing holds them back any more
	}
	return &t.lim
}

// sendCheck is what the policies check in one SEND, read from its metadata.
type sendCheck struct {
	size        int // the SEND's headers and payload, as upstream measures a message
	chunked     bool
	encrypted   bool
	deliverAt   int64 // 0: none
	publishTime int64
}

func newSendCheck(md *pb.MessageMetadata, payload []byte) sendCheck {
	return sendCheck{
		size:        len(payload),
		chunked:     md.NumChunksFromMsg != nil || md.ChunkId != nil,
		encrypted:   len(md.GetEncryptionKeys()) > 0,
		deliverAt:   md.GetDeliverAtTime(),
		publishTime: int64(md.GetPublishTime()),
	}
}

// refuseSend says why t's policies refuse a SEND, in upstream's words and code, or "". As
// upstream: a topic's maxMessageSize (when below the broker's, which the frame reader holds)
// spares the chunks of a chunked message; a deliver-at time further after the publish time
// than the delayed delivery policy allows is refused while delayed delivery is on; a
// namespace that requires encryption refuses what is not encrypted. Called with t.mu held.
func (t *topic) refuseSend(c sendCheck) (pb.ServerError, string) {
	lim := t.limits()
	if lim.maxMessageSize > 0 && !c.chunked && c.size > lim.maxMessageSize {
		return pb.ServerError_NotAllowedError, "Exceed maximum message size"
	}
	if d := lim.delayed; d.Active && d.MaxDeliveryDelayInMillis > 0 && c.deliverAt > 0 &&
		c.deliverAt-c.publishTime > d.MaxDeliveryDelayInMillis {
		return pb.ServerError_NotAllowedError, "Exceeds max allowed delivery delay of " +
			strconv.FormatInt(d.MaxDeliveryDelayInMillis, 10) + " milliseconds"
	}
	if lim.encryptionRequired && !c.encrypted {
		return pb.ServerError_MetadataError, "Messages must be encrypted"
	}
	return 0, ""
}

// subscriptionTypeRefusal says why t does not take a subscription of type st, or "".
// Called with t.mu held.
func (t *topic) subscriptionTypeRefusal(st pb.CommandSubscribe_SubType) string {
	name := st.String()
	if slices.Contains(t.limits().subTypes, name) {
		return ""
	}
	return "Topic[{" + t.full + "}] doesn't support " + name + " sub type!"
}
