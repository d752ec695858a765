package deadletter

import (
	"strings"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// Kind is what a topic is for (client/naming' kinds).
type Kind = naming.Kind

// The kinds of topic.
const (
	Standard   = naming.Standard
	Retry      = naming.Retry
	DeadLetter = naming.DeadLetter
)

// PropertyTopicPurpose is the topic property that records why a topic was auto-created
// (PIP-263); its values are client.TopicPurposeStandard, …DeadLetter and …RetryLetter.
const PropertyTopicPurpose = naming.PropertyTopicPurpose

// Basis is what a verdict rests on.
type Basis int

const (
	ByNothing Basis = iota // no evidence: a standard topic as far as anyone can tell
	ByPurpose              // the broker's purpose property
	ByName                 // the -DLQ / -RETRY suffix
	BySample               // the newest message
)

func (b Basis) String() string {
	return [...]string{"nothing", "purpose property", "name", "newest message"}[b]
}

// Evidence is what a topic is judged from.
type Evidence struct {
	// Topic is the topic's full name (a partitioned topic's own name, not a partition's).
	Topic string
	// Purpose is the topic's purposeOfAutoCreatedTopic property, "" when it has none or the
	// broker does not report properties (an upstream broker never sets it).
	Purpose string
	// Known are the full names of the topics known to exist, to find the origin a -DLQ or
	// -RETRY name derives from; Names, when set, is the same as a set, made once for many
	// topics of one listing, and Known is then not read.
	Known []string
	Names naming.Names
	// Newest is the topic's newest message; nil when the topic is empty or was not sampled.
	Newest *Sample
}

// Sample is the part of a message the rule reads.
type Sample struct {
	Properties   map[string]string
	ProducerName string
	// DeliverAt reports that the message asked for delayed delivery (deliver_at_time).
	DeliverAt bool
	// OriginSubscriptions are the subscriptions of the topic its REAL_TOPIC names, when
	// known: they settle which part of the producer's name is the subscription.
	OriginSubscriptions []string
}

// Verdict is what a topic is for, and where its letters come from when it holds letters.
type Verdict struct {
	Kind Kind
	// Origin is the topic the letters died on and Subscription the subscription they died
	// on; "" when unknown.
	Origin, Subscription string
	By                   Basis
}

// Classify decides what e.Topic is for. In order:
//
//  1. a purpose property of "dead letter" or "retry letter" says so;
//  2. a name <S>-<X>-DLQ / <S>-<X>-RETRY says so, unless the purpose property says
//     "standard" (a broker that follows PIP-263 marked it so: nothing derives from it);
//  3. otherwise the newest message decides: one carrying REAL_TOPIC is a letter, and
//     SampleKind tells a dead letter from a retry letter;
//  4. otherwise it is a standard topic.
//
// The origin and subscription come from the name where it derives from a topic, else from
// the newest message (REAL_TOPIC, and the DLQ producer's name).
func Classify(e Evidence) Verdict {
	v := Verdict{}
	switch e.Purpose {
	case client.TopicPurposeDeadLetter:
		v.Kind, v.By = DeadLetter, ByPurpose
	case client.TopicPurposeRetryLetter:
		v.Kind, v.By = Retry, ByPurpose
	}
	nameKind, origin, sub, named := e.fromName()
	if v.By == ByNothing && nameKind != Standard && e.Purpose != client.TopicPurposeStandard {
		v.Kind, v.By = nameKind, ByName
	}
	if v.By == ByNothing && e.Newest != nil && e.Newest.Properties[client.PropertyRealTopic] != "" {
		v.Kind, v.By = SampleKind(*e.Newest), BySample
	}
	if v.Kind == Standard {
		return Verdict{}
	}
	if named && nameKind == v.Kind {
		v.Origin, v.Subscription = origin, sub
	}
	if e.Newest != nil && (v.Origin == "" || v.Subscription == "") {
		l := Read(e.Newest.Properties, e.Newest.ProducerName)
		l.Subscription = SubscriptionAmong(e.Newest.ProducerName, l.OriginTopic, e.Newest.OriginSubscriptions)
		if v.Origin == "" {
			v.Origin = l.Origin
		}
		if v.Subscription == "" && (v.Origin == l.Origin || l.Origin == "") {
			v.Subscription = l.Subscription
		}
	}
	if v.Origin == "" && nameKind == v.Kind {
		v.Origin, v.Subscription = origin, sub // the last dash's guess
	}
	return v
}

// NeedsSample reports whether Classify would decide better with the topic's newest message:
// its purpose and name do not make it a letter topic, or they do but no existing topic is the
// origin its name derives from.
func NeedsSample(e Evidence) bool {
	e.Newest = nil
	if Classify(e).Kind == Standard {
		return true
	}
	_, _, _, named := e.fromName()
	return !named
}

// fromName applies the naming rule to e.Topic with the topics e knows.
func (e Evidence) fromName() (kind Kind, origin, sub string, named bool) {
	if e.Names != nil {
		return e.Names.FromName(e.Topic)
	}
	return naming.FromName(e.Topic, e.Known)
}

// SampleKind tells a dead letter from a retry letter by what the official Go and Java clients
// write on each:
//
//   - their DLQ routers name the DLQ producer <topic>-<subscription>-<consumer>-<random>-DLQ
//     unless the application names it: a producer name ending in -DLQ is a dead letter;
//   - a retry letter always carries RECONSUMETIMES (1 on the first hop) and is published
//     with the delay asked for; a dead letter carries RECONSUMETIMES only when it came
//     through retries, and then from the DLQ producer;
//   - a letter without RECONSUMETIMES died by redelivery: only the DLQ router writes those.
//
// So: a -DLQ producer, or no RECONSUMETIMES, is a dead letter; otherwise a retry letter.
func SampleKind(s Sample) Kind {
	if strings.HasSuffix(s.ProducerName, client.DLQTopicSuffix) {
		return DeadLetter
	}
	if _, ok := s.Properties[client.PropertyReconsumeTimes]; !ok {
		return DeadLetter
	}
	return Retry
}
