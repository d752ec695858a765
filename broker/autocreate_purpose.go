package broker

import (
	"strings"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// PIP-263, as docs/design.md fixes it: a topic is a dead-letter or retry topic iff its property
// purposeOfAutoCreatedTopic says so. The property is set when the topic is auto-created, from
// the request's topic_purpose (extension field 1000 of PRODUCER and SUBSCRIBE) or, for clients
// that do not send it, from the name: <S>-<X>-DLQ / <S>-<X>-RETRY for an existing topic S and a
// non-empty X. Auto-creating such a topic is refused when one of those S is itself a dead-letter
// or retry topic: no DLQ of a DLQ. A user's own topic named …-DLQ that nothing derives from is
// just a topic, and auto-creating it records "standard", so that nobody reading the name takes
// it for a DLQ (other topics get no property: PIP-263 marks only the topics whose purpose is in
// doubt). In upstream-compat mode none of this applies (upstream never adopted it).

// PropertyTopicPurpose is the topic property that records why a topic was auto-created.
const PropertyTopicPurpose = naming.PropertyTopicPurpose

// Topic purposes, as carried in topic_purpose and stored in PropertyTopicPurpose.
const (
	PurposeStandard    = naming.PurposeStandard
	PurposeDeadLetter  = naming.PurposeDeadLetter
	PurposeRetryLetter = naming.PurposeRetryLetter
)

// sourceTopics returns the existing topics S such that name is <S>-<X>-DLQ|RETRY with X
// non-empty. Called with r.mu held.
func (r *topicRegistry) sourceTopics(name naming.Topic) []naming.Topic {
	kind, stem := naming.LetterKind(name.Base().Local)
	if kind == naming.Standard {
		return nil
	}
	var out []naming.Topic
	for i := strings.LastIndex(stem, "-"); i > 0; i = strings.LastIndex(stem[:i], "-") {
		s := name.Base()
		s.Local = stem[:i]
		if r.existsLocked(s) {
			out = append(out, s)
		}
	}
	return out
}

// existsLocked reports whether name is an open, stored or partitioned topic. Called with r.mu
// held.
func (r *topicRegistry) existsLocked(name naming.Topic) bool {
	if r.knownLocked(name.String()) {
		return true
	}
	_, ok := r.partitioned[name.String()]
	return ok
}

// purposeOfLocked is the stored purpose of an existing topic (of its partitions' base name, or
// partition 0 for a partitioned topic). Called with r.mu held.
func (r *topicRegistry) purposeOfLocked(name naming.Topic) string {
	if t, ok := r.topics[name.String()]; ok {
		return t.property(PropertyTopicPurpose)
	}
	if _, ok := r.stored[name.String()]; ok {
		return r.storedPurposeLocked(name.String())
	}
	if _, ok := r.partitioned[name.String()]; ok {
		if t, ok := r.topics[name.PartitionTopic(0).String()]; ok {
			return t.property(PropertyTopicPurpose)
		}
		if _, ok := r.stored[name.PartitionTopic(0).String()]; ok {
			return r.storedPurposeLocked(name.PartitionTopic(0).String())
		}
	}
	return ""
}

// autoCreatePurpose decides the purpose property of a topic about to be auto-created, or
// refuses the creation (DLQ of a DLQ). requested is the client's topic_purpose ("" if none).
// Called with r.mu held.
func (r *topicRegistry) autoCreatePurpose(name naming.Topic, requested string) (string, *serverError) {
	if r.b.cfg.CompatUpstream {
		return "", nil
	}
	sources := r.sourceTopics(name)
	purpose := naming.AutoCreatePurpose(name.Base().Local, requested, len(sources) > 0)
	if purpose != PurposeDeadLetter && purpose != PurposeRetryLetter {
		return purpose, nil
	}
	for _, s := range sources {
		if p := r.purposeOfLocked(s); p == PurposeDeadLetter || p == PurposeRetryLetter {
			return "", errorf(pb.ServerError_NotAllowedError,
				"%s would be a %s topic of %s, which is itself a %s topic: a DLQ or retry topic cannot have one",
				name.Base(), purpose, s, p)
		}
	}
	return purpose, nil
}
