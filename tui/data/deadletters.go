package data

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/deadletter"
)

// DeadLetter is a peeked DLQ (or retry) message with what the clients wrote on it read out.
type DeadLetter struct {
	Message
	Origin      string // REAL_TOPIC without a partition suffix; "" when absent
	OriginID    string // ORIGIN_MESSAGE_ID; "" when absent
	OriginSub   string // the subscription it died on, when its producer's name tells
	Reconsumes  int    // RECONSUMETIMES; -1 when absent
	ReasonKey   string // the first reason property (sorted by key), "" when none
	Reason      string
	ReplayCount int // REPLAY_COUNT a replay wrote; 0 when absent
}

// NewDeadLetter reads the DLQ properties of m (client/deadletter's reading).
func NewDeadLetter(m Message) DeadLetter {
	l := deadletter.Read(m.Properties, m.ProducerName)
	return DeadLetter{Message: m, Origin: l.Origin, OriginID: l.OriginID, OriginSub: l.Subscription,
		Reconsumes: l.Reconsumes, ReasonKey: l.ReasonKey, Reason: l.Reason, ReplayCount: l.ReplayCount}
}

// Retention is a namespace's retention policy: how long and how much acknowledged (or
// never subscribed) data is kept. Zero both: nothing is kept once no subscription needs it.
// TTL is the namespace's message TTL: what a subscription leaves unacknowledged for longer is
// acknowledged by the broker (0: never, or the broker's default, which the admin API does not
// tell).
type Retention struct {
	Minutes int64 // -1: unlimited
	SizeMB  int64 // -1: unlimited
	TTL     time.Duration
}

// None reports whether nothing is retained.
func (r Retention) None() bool { return r.Minutes == 0 || r.SizeMB == 0 }

// DeadLetterSource is what the flow, dead-letters and replay screens need beyond Source.
// Sources that lack it still show flows and dead letters; the screens say what is missing.
type DeadLetterSource interface {
	// Retention is the retention policy of a topic's namespace.
	Retention(ctx context.Context, topic string) (Retention, error)
	// Replay runs a replay (or a dry run) of req, sending progress on events (closed when
	// it returns) until it ends or ctx is cancelled.
	Replay(ctx context.Context, req ReplayRequest, events chan<- ReplayEvent) (ReplaySummary, error)
	// History is the newest actions on dlq (replays, discards, purges, …) of this cluster,
	// newest first; RecordReplay adds one, whatever its action.
	History(ctx context.Context, dlq string, limit int) ([]HistoryEntry, error)
	RecordReplay(e HistoryEntry) error
	// Purge drops the first n letters of sub's backlog (n ≤ 0: all of it) and says how many
	// letters went (-1: the cluster does not count them).
	Purge(ctx context.Context, dlq, sub string, n int64) (int64, error)
	// CreateSubscription creates a durable subscription on dlq at its earliest retained
	// letter, so that nothing that arrives from then on is lost.
	CreateSubscription(ctx context.Context, dlq, sub string) error
	// SetRetention sets the retention policy of namespace ns ("tenant/ns").
	SetRetention(ctx context.Context, ns string, r Retention) error
}

// Health is a DLQ's health line: warnings, most urgent first.
type Health struct {
	Warnings []string
	OK       string // said when there is no warning
}

// HealthInput is what the health of a DLQ is judged from.
type HealthInput struct {
	DLQ             *TopicDetail
	Retention       Retention
	RetentionKnown  bool
	Redeliver       float64 // the origin subscription's redelivery rate now
	RedeliverBefore float64 // …at the previous reading (-1: none)
	Backlogs        []int64 // the DLQ's backlog at the last readings, oldest first
}

// JudgeHealth warns when the DLQ loses messages (no subscription and no retention), when
// redeliveries climb, when the DLQ grows, and when its namespace's message TTL expires dead
// letters its subscriptions have not acknowledged.
func JudgeHealth(in HealthInput) Health {
	var h Health
	if in.DLQ == nil {
		return Health{OK: "no such topic yet: nothing has died"}
	}
	if len(in.DLQ.Subscriptions) == 0 {
		switch {
		case in.RetentionKnown && in.Retention.None():
			h.Warnings = append(h.Warnings, "no subscription and no retention: dead letters are being lost")
		case !in.RetentionKnown:
			h.Warnings = append(h.Warnings, "no subscription: dead letters are kept only as long as retention says (unknown here)")
		}
	}
	if in.Redeliver > 0 && in.RedeliverBefore >= 0 && in.Redeliver > in.RedeliverBefore*1.2 {
		h.Warnings = append(h.Warnings, "redeliveries climbing: "+rate(in.RedeliverBefore)+" → "+rate(in.Redeliver)+" msg/s")
	}
	if n := len(in.Backlogs); n >= 2 && in.Backlogs[n-1] > in.Backlogs[0] {
		h.Warnings = append(h.Warnings, "DLQ growing: +"+strconv.FormatInt(in.Backlogs[n-1]-in.Backlogs[0], 10)+" since "+readings(n))
	} else if in.DLQ.Stats.RateIn > 0 {
		h.Warnings = append(h.Warnings, "DLQ growing: "+rate(in.DLQ.Stats.RateIn)+" msg/s in")
	}
	if in.RetentionKnown && in.Retention.TTL > 0 && len(in.DLQ.Subscriptions) > 0 {
		h.Warnings = append(h.Warnings, "dead letters expire after "+span(in.Retention.TTL)+" (message TTL)")
	}
	if len(h.Warnings) == 0 {
		h.OK = "healthy: kept by " + subNames(in.DLQ.Subscriptions)
		if len(in.DLQ.Subscriptions) == 0 {
			h.OK = "no subscription, but retention keeps dead letters"
		}
	}
	return h
}

func readings(n int) string {
	if n == 2 {
		return "the previous reading"
	}
	return strconv.Itoa(n-1) + " readings ago"
}

func subNames(subs []Subscription) string {
	var names []string
	for _, s := range subs {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// span writes d in its two largest units: 7d, 1d 12h, 90m → 1h 30m, 45s.
func span(d time.Duration) string {
	units := []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}}
	d = d.Round(time.Second)
	for i, u := range units {
		if d < u.d && i < len(units)-1 {
			continue
		}
		s := strconv.FormatInt(int64(d/u.d), 10) + u.name
		if i+1 < len(units) {
			if rest := (d % u.d) / units[i+1].d; rest > 0 {
				s += " " + strconv.FormatInt(int64(rest), 10) + units[i+1].name
			}
		}
		return s
	}
	return "0s"
}

func rate(v float64) string {
	if v >= 10 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
