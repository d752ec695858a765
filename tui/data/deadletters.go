package data

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Dead-letter and retry properties, as the clients (official and ours) write them.
const (
	PropRealTopic       = "REAL_TOPIC"
	PropOriginMessageID = "ORIGIN_MESSAGE_ID"
	PropReconsumeTimes  = "RECONSUMETIMES"
)

// DeadLetter is a peeked DLQ (or retry) message with what the clients wrote on it read out.
type DeadLetter struct {
	Message
	Origin      string // REAL_TOPIC without a partition suffix; "" when absent
	OriginID    string // ORIGIN_MESSAGE_ID; "" when absent
	Reconsumes  int    // RECONSUMETIMES; -1 when absent
	ReasonKey   string // the first reason property (sorted by key), "" when none
	Reason      string
	ReplayCount int // REPLAY_COUNT a replay wrote; 0 when absent
}

// IsReasonKey reports whether a property carries why a message failed: its key contains
// "reason", "error" or "exception" (any case), as applications name it.
func IsReasonKey(k string) bool {
	l := strings.ToLower(k)
	return strings.Contains(l, "reason") || strings.Contains(l, "error") || strings.Contains(l, "exception")
}

// Reasons are the message's reason properties, sorted by key.
func Reasons(props map[string]string) [][2]string {
	var out [][2]string
	for k, v := range props {
		if IsReasonKey(k) {
			out = append(out, [2]string{k, v})
		}
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// NewDeadLetter reads the DLQ properties of m.
func NewDeadLetter(m Message) DeadLetter {
	d := DeadLetter{Message: m, Reconsumes: -1, OriginID: m.Properties[PropOriginMessageID]}
	if rt := m.Properties[PropRealTopic]; rt != "" {
		d.Origin = rt
		if base, _, ok := PartitionOf(rt); ok {
			d.Origin = base
		}
	}
	if v, ok := m.Properties[PropReconsumeTimes]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			d.Reconsumes = n
		}
	}
	if n, err := strconv.Atoi(m.Properties["REPLAY_COUNT"]); err == nil {
		d.ReplayCount = n
	}
	if rs := Reasons(m.Properties); len(rs) > 0 {
		d.ReasonKey, d.Reason = rs[0][0], rs[0][1]
	}
	return d
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
	// History is the newest replays of dlq, newest first; RecordReplay adds one.
	History(ctx context.Context, dlq string, limit int) ([]HistoryEntry, error)
	RecordReplay(e HistoryEntry) error
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

// Derive splits a retry or DLQ topic name <S>-<X>-RETRY|DLQ into its origin topic S and
// subscription X, using the topics known to exist (full names): the longest existing S wins.
// Without a match it falls back to the last "-" (the common case of a subscription without
// dashes). ok is false for other names.
func Derive(name string, known []string) (origin, sub string, ok bool) {
	n := ParseTopic(name)
	var base string
	switch KindOf(n.Local) {
	case KindDLQ:
		base = strings.TrimSuffix(n.Local, "-DLQ")
	case KindRetry:
		base = strings.TrimSuffix(n.Local, "-RETRY")
	default:
		return "", "", false
	}
	set := map[string]bool{}
	for _, k := range known {
		set[ParseTopic(k).String()] = true
	}
	for i := len(base) - 1; i > 0; i-- {
		if base[i] == '-' && i < len(base)-1 {
			cand := TopicName{n.Domain, n.Tenant, n.Namespace, base[:i]}.String()
			if set[cand] {
				return cand, base[i+1:], true
			}
		}
	}
	if i := strings.LastIndex(base, "-"); i > 0 && i < len(base)-1 {
		return TopicName{n.Domain, n.Tenant, n.Namespace, base[:i]}.String(), base[i+1:], true
	}
	return "", "", false
}

// RetryTopic and DLQTopic are the names the clients derive for topic and sub.
func RetryTopic(topic, sub string) string { return ParseTopic(topic).String() + "-" + sub + "-RETRY" }
func DLQTopic(topic, sub string) string   { return ParseTopic(topic).String() + "-" + sub + "-DLQ" }
