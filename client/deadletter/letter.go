// Package deadletter is what letterbox knows about dead letters and the topics that hold them,
// as rules over inputs it is given, never I/O: what the clients write on a retry or dead letter
// and what a letter's reason, origin and origin subscription are (Read), and whether a topic is
// a dead-letter topic, a retry topic or neither (Classify). The rule is written down for users
// in docs/dead-letters.md ("Which topics are DLQs"). What a name says (the -DLQ and -RETRY
// names, partitions) is client/naming', which Classify asks; what the purpose property and the
// newest message say is read here. Reading the inputs from a cluster (topic properties, the
// newest message) is client/triage's job.
package deadletter

import (
	"slices"
	"strconv"
	"strings"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// Properties letterbox's replay writes on what it republishes (client/replay sets them).
const (
	PropertyReplayedFrom = "REPLAYED_FROM"
	PropertyReplayCount  = "REPLAY_COUNT"
)

// Letter is what the clients wrote on one retry or dead letter, read out.
type Letter struct {
	// Origin is REAL_TOPIC without a -partition-N suffix; OriginTopic REAL_TOPIC as written
	// (the Go clients write the partition's name). Both "" when absent.
	Origin, OriginTopic string
	// OriginID is ORIGIN_MESSAGE_ID (or the older ORIGIN_MESSAGE_IDY_TIME); "" when absent.
	OriginID string
	// Subscription is the subscription the letter died on, read from the name the clients'
	// DLQ routers give their producer (see SubscriptionFromProducer); "" when it cannot tell.
	Subscription string
	// Reconsumes is RECONSUMETIMES, -1 when absent (a letter that died by redelivery alone).
	Reconsumes int
	// ReasonKey and Reason are the letter's reason property (see Reason), "" when none.
	ReasonKey, Reason string
	// ReplayCount is REPLAY_COUNT (0 when absent); ReplayedFrom REPLAYED_FROM.
	ReplayCount  int
	ReplayedFrom string
}

// Read reads a letter's properties; producer is the name of the producer that published it
// ("" when unknown), from which the origin subscription is read.
func Read(props map[string]string, producer string) Letter {
	var r Reader
	return r.Read(props, producer)
}

// Reader reads letters as Read does, for one that reads a whole DLQ: what Read derives from
// a producer's name, a REAL_TOPIC and a property's name (the subscription, the origin, which
// property is the reason) is the same for every letter that carries them, and a DLQ's letters
// carry few of each, so a Reader derives each once. Deriving them cost more than the rest of
// a scan's own work on every letter. What it remembers is bounded (readerMemory); past that it
// derives again. The zero Reader remembers nothing. Not safe for concurrent use.
type Reader struct {
	// Subscriptions, when set, are the subscriptions of an origin, for SubscriptionAmong; it
	// must say the same of an origin every time it is asked. Nil: the producer's name alone.
	Subscriptions func(origin string) []string

	ranks   map[string]int8      // a property name → reasonRank
	origins map[string]string    // REAL_TOPIC → the origin
	subs    map[[2]string]string // producer, REAL_TOPIC → the subscription
}

// readerMemory bounds each of a Reader's memories: names a DLQ repeats number a handful,
// whereas names that never repeat (a producer per letter) would only fill it.
const readerMemory = 1024

// NewReader is a Reader that remembers; subs is its Subscriptions.
func NewReader(subs func(origin string) []string) *Reader {
	return &Reader{Subscriptions: subs, ranks: map[string]int8{}, origins: map[string]string{}, subs: map[[2]string]string{}}
}

// Read reads a letter as Read does, with r's Subscriptions when set.
func (r *Reader) Read(props map[string]string, producer string) Letter {
	l := Letter{Reconsumes: -1, OriginTopic: props[client.PropertyRealTopic]}
	l.Origin = r.origin(l.OriginTopic)
	l.OriginID = props[client.PropertyOriginMessageID]
	if l.OriginID == "" {
		l.OriginID = props[client.PropertyOriginMessageIDOld]
	}
	if v, ok := props[client.PropertyReconsumeTimes]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			l.Reconsumes = n
		}
	}
	if v, ok := props[PropertyReplayCount]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			l.ReplayCount = n
		}
	}
	l.ReplayedFrom = props[PropertyReplayedFrom]
	l.ReasonKey, l.Reason = r.reason(props)
	if l.OriginTopic != "" {
		l.Subscription = r.subscription(producer, l.OriginTopic, l.Origin)
	}
	return l
}

// reason is Reason, with the ranks r remembers.
func (r *Reader) reason(props map[string]string) (key, value string) {
	var rank int8
	for k, v := range props {
		if kr := r.rank(k); kr > 0 && (key == "" || kr > rank || kr == rank && k < key) {
			key, value, rank = k, v, kr
		}
	}
	return key, value
}

func (r *Reader) rank(k string) int8 {
	if n, ok := r.ranks[k]; ok {
		return n
	}
	n := int8(reasonRank(k))
	if r.ranks != nil && len(r.ranks) < readerMemory {
		r.ranks[k] = n
	}
	return n
}

func (r *Reader) origin(topic string) string {
	if o, ok := r.origins[topic]; ok {
		return o
	}
	o := naming.BaseName(topic)
	if r.origins != nil && len(r.origins) < readerMemory {
		r.origins[topic] = o
	}
	return o
}

func (r *Reader) subscription(producer, realTopic, origin string) string {
	key := [2]string{producer, realTopic}
	if s, ok := r.subs[key]; ok {
		return s
	}
	var subs []string
	if r.Subscriptions != nil && origin != "" {
		subs = r.Subscriptions(origin)
	}
	s := SubscriptionAmong(producer, realTopic, subs)
	if r.subs != nil && len(r.subs) < readerMemory {
		r.subs[key] = s
	}
	return s
}

// IsReasonKey reports whether a property carries why a message failed: its key contains
// "reason", "error" or "exception" (any case), as applications name it. No client writes a
// standard one.
func IsReasonKey(k string) bool { return reasonRank(k) > 0 }

// reasonRank orders reason properties, most telling first: a key that is "reason", then keys
// containing "reason", "error", "exception"; 0 for other keys.
func reasonRank(k string) int {
	l := strings.ToLower(k)
	switch {
	case l == "reason":
		return 4
	case strings.Contains(l, "reason"):
		return 3
	case strings.Contains(l, "error"):
		return 2
	case strings.Contains(l, "exception"):
		return 1
	}
	return 0
}

// before orders two reason keys: by rank, then by name.
func before(a, b string) bool {
	ra, rb := reasonRank(a), reasonRank(b)
	if ra != rb {
		return ra > rb
	}
	return a < b
}

// Reasons are the message's reason properties, the reason (Reason) first.
func Reasons(props map[string]string) [][2]string {
	var out [][2]string
	for k, v := range props {
		if IsReasonKey(k) {
			out = append(out, [2]string{k, v})
		}
	}
	slices.SortFunc(out, func(a, b [2]string) int {
		if before(a[0], b[0]) {
			return -1
		}
		if before(b[0], a[0]) {
			return 1
		}
		return 0
	})
	return out
}

// Reason is the letter's reason, the first of Reasons: a property named "reason", else one
// whose key contains "reason", "error" or "exception", in that order (then by key).
func Reason(props map[string]string) (key, value string) {
	var r Reader
	return r.reason(props)
}

// SubscriptionFromProducer reads the origin subscription out of a dead letter's producer name.
// The DLQ routers of the official Go and Java clients and of letterbox's client name their
// producer, unless the application names it, <topic>-<subscription>-<consumer>-<5 random
// characters>-DLQ, where <topic> is the consumer's topic as configured (full, short, or a
// partition's); older Java clients wrote <topic>-<subscription>-DLQ. realTopic (REAL_TOPIC)
// tells where <topic> ends. Consumer names with a dash make the split ambiguous: the last dash
// wins. "" when the name does not follow the pattern.
func SubscriptionFromProducer(producer, realTopic string) string {
	return SubscriptionAmong(producer, realTopic, nil)
}

// SubscriptionAmong is SubscriptionFromProducer for an origin whose subscriptions are known
// (subs): the longest of them that the name holds where the subscription goes wins, which
// settles names whose consumer part has a dash (billing-1). Without a match it falls back to
// the last dash.
func SubscriptionAmong(producer, realTopic string, subs []string) string {
	after := afterTopic(producer, realTopic)
	if after == "" {
		return ""
	}
	best := ""
	for _, s := range subs {
		if len(s) > len(best) && holdsSubscription(after, s) {
			best = s
		}
	}
	if best != "" {
		return best
	}
	parts := strings.Split(after, "-")
	if len(parts) >= 3 && len(parts[len(parts)-1]) == 5 {
		return strings.Join(parts[:len(parts)-2], "-")
	}
	return after
}

// holdsSubscription reports whether after (<subscription>-<consumer>-<5 random characters>,
// or only <subscription>) can be read with sub as its subscription.
func holdsSubscription(after, sub string) bool {
	if after == sub {
		return true
	}
	rest, ok := strings.CutPrefix(after, sub+"-")
	i := strings.LastIndex(rest, "-")
	return ok && i > 0 && len(rest)-i-1 == 5
}

// afterTopic is what a DLQ producer's name holds after <topic>- and before -DLQ.
func afterTopic(producer, realTopic string) string {
	rest, ok := strings.CutSuffix(producer, client.DLQTopicSuffix)
	if !ok || realTopic == "" {
		return ""
	}
	for _, t := range topicForms(realTopic) {
		if r, ok := strings.CutPrefix(rest, t+"-"); ok && r != "" {
			return r
		}
	}
	return ""
}

// topicForms are the ways a consumer may have named topic: fully qualified or short, as a
// partition or as its base, longest first.
func topicForms(topic string) []string {
	var out []string
	for _, t := range []string{topic, naming.BaseName(topic)} {
		out = append(out, t)
		_, rest, ok := strings.Cut(t, "://")
		if !ok {
			continue
		}
		out = append(out, rest)
		if r, ok := strings.CutPrefix(rest, "public/default/"); ok {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(out)
}
