package broker

import (
	"time"

	"github.com/letterbox-dev/letterbox/broker/ratelimit"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// The subscribe rate, as upstream's SubscribeRateLimiter: a topic's subscribeRate (its policy,
// else its namespace's, else subscribeThrottlingRatePerConsumer per
// subscribeRatePeriodPerConsumerInSecond) bounds how often one consumer, known by its
// client's address, its name and its id, may subscribe; a SUBSCRIBE over it is refused
// NotAllowedError "Subscribe limited by subscribe rate limit per consumer." (a consumer that
// reconnects in a loop is what it stops). Consumers whose allowance is whole again are
// forgotten.

// consumerKey is upstream's ConsumerIdentifier.
type consumerKey struct {
	host, name string
	id         uint64
}

// subscribeLimiter is a topic's subscribe rate state. Guarded by the topic's mutex.
type subscribeLimiter struct {
	rate      adminapi.SubscribeRate
	consumers map[consumerKey]*ratelimit.Bucket
}

// allowSubscribe takes one subscribe from cs's allowance, or reports that there is none left.
// Called with t.mu held.
func (t *topic) allowSubscribe(cs *consumer, now time.Time) bool {
	sl := &t.subscribeLimit
	rate := t.limits().subscribeRate
	if rate != sl.rate {
		sl.rate, sl.consumers = rate, nil // new allowances, as upstream's limiter is rebuilt
	}
	if rate.SubscribeThrottlingRatePerConsumer <= 0 {
		return true
	}
	for k, b := range sl.consumers {
		if b.Tokens(now) >= b.Rate() {
			delete(sl.consumers, k)
		}
	}
	key := consumerKey{host: cs.conn.ip, name: cs.name, id: cs.id}
	b := sl.consumers[key]
	if b == nil {
		period := time.Duration(max(rate.RatePeriodInSecond, 1)) * time.Second
		b = ratelimit.New(int64(rate.SubscribeThrottlingRatePerConsumer), period, now)
		if sl.consumers == nil {
			sl.consumers = map[consumerKey]*ratelimit.Bucket{}
		}
		sl.consumers[key] = b
	}
	if b.Tokens(now) < 1 {
		return false
	}
	b.Consume(1, now)
	return true
}
