package naming

// PIP-263's record of what a topic is for, as docs/design.md fixes it: the topic property
// PropertyTopicPurpose, set when a topic is auto-created, from the purpose its producer or
// consumer declares (topic_purpose, an extension field of PRODUCER and SUBSCRIBE that upstream
// ignores) or, for clients that declare none, from its name.
const PropertyTopicPurpose = "purposeOfAutoCreatedTopic"

// The values of PropertyTopicPurpose and topic_purpose.
const (
	PurposeStandard    = "standard"
	PurposeDeadLetter  = "dead letter"
	PurposeRetryLetter = "retry letter"
)

// AutoCreatePurpose is the purpose to record for a topic named name that is about to be
// auto-created: the declared one when it is a dead-letter or retry purpose; else the one its
// -DLQ or -RETRY name implies when derived (it is <S>-<X>-DLQ or -RETRY of an existing topic S);
// PurposeStandard for such a name that derives from nothing, so that nobody reading the name
// takes it for a DLQ; "" (no property) for any other topic.
func AutoCreatePurpose(name, declared string, derived bool) string {
	if declared == PurposeDeadLetter || declared == PurposeRetryLetter {
		return declared
	}
	switch kind, _ := LetterKind(name); {
	case kind == Standard:
		return ""
	case !derived:
		return PurposeStandard
	case kind == DeadLetter:
		return PurposeDeadLetter
	}
	return PurposeRetryLetter
}
