package naming

import (
	"iter"
	"strings"
)

// The suffixes the clients give dead-letter and retry topics: <topic>-<subscription>-DLQ and
// <topic>-<subscription>-RETRY (the official clients since 2.10; older ones named them
// <subscription>-DLQ in the topic's namespace).
const (
	DLQSuffix   = "-DLQ"
	RetrySuffix = "-RETRY"
)

// Kind is what a topic is for.
type Kind int

// The kinds of topic.
const (
	Standard Kind = iota
	Retry
	DeadLetter
)

func (k Kind) String() string {
	switch k {
	case Retry:
		return "retry"
	case DeadLetter:
		return "dead letter"
	}
	return "standard"
}

// LetterKind is the kind a topic's name implies (a partition's name: its topic's), and the
// name without the -DLQ or -RETRY suffix; Standard and "" for other names.
func LetterKind(name string) (kind Kind, stem string) {
	name = BaseName(name)
	if s, ok := strings.CutSuffix(name, DLQSuffix); ok {
		return DeadLetter, s
	}
	if s, ok := strings.CutSuffix(name, RetrySuffix); ok {
		return Retry, s
	}
	return Standard, ""
}

// IsLetterName reports a name the clients give dead-letter and retry topics.
func IsLetterName(name string) bool {
	k, _ := LetterKind(name)
	return k != Standard
}

// DLQName and RetryName are the names the clients derive for the topic named topic (a
// partition's name: its topic's) and a subscription.
func DLQName(topic, sub string) string { return BaseName(topic) + "-" + sub + DLQSuffix }

// RetryName: see DLQName.
func RetryName(topic, sub string) string { return BaseName(topic) + "-" + sub + RetrySuffix }

// FromName applies the naming rule of the clients: <S>-<X>-DLQ is a dead-letter topic and
// <S>-<X>-RETRY a retry topic of topic S and subscription X. topic is a full name; known are
// full names of existing topics: the longest existing S wins, and without one the last dash
// splits S from X (named is then false: the origin is a guess). kind is Standard for other
// names. It reads known once per call: to judge many names against one listing, make Names
// of it once.
func FromName(topic string, known []string) (kind Kind, origin, sub string, named bool) {
	if k, _ := LetterKind(topic[strings.LastIndex(topic, "/")+1:]); k == Standard {
		return Standard, "", "", false
	}
	return NewNames(known).FromName(topic)
}

// Names is a set of existing topics, by base name (a partition stands for its topic), as
// FromName looks origins up in it.
type Names map[string]struct{}

// NewNames is the set of known, full names.
func NewNames(known []string) Names {
	n := make(Names, len(known))
	for _, k := range known {
		n[BaseName(k)] = struct{}{}
	}
	return n
}

// OriginNames is the set of the names among all (full names, ranged twice) that a dead-letter
// or retry topic's name among them may derive from: FromName judges every name with it as
// with NewNames of all, and a listing of 100,000 topics, nearly none of them an origin, makes
// a set of a few hundred rather than one of 100,000.
func OriginNames(all iter.Seq[string]) Names {
	maybe := map[string]bool{}
	for topic := range all {
		for origin := range origins(topic) {
			maybe[origin] = true
		}
	}
	n := Names{}
	for topic := range all {
		if b := BaseName(topic); maybe[b] {
			n[b] = struct{}{}
		}
	}
	return n
}

// origins are the topics a dead-letter or retry topic's name may derive from, longest first
// (none for another name): its stem up to each dash, in its namespace.
func origins(topic string) iter.Seq2[string, string] {
	return func(yield func(origin, sub string) bool) {
		i := strings.LastIndex(topic, "/")
		prefix := topic[:i+1]
		kind, stem := LetterKind(topic[i+1:])
		if kind == Standard {
			return
		}
		for i := len(stem) - 2; i > 0; i-- {
			if stem[i] == '-' && !yield(prefix+stem[:i], stem[i+1:]) {
				return
			}
		}
	}
}

// FromName is the package's FromName with n as the known topics.
func (n Names) FromName(topic string) (kind Kind, origin, sub string, named bool) {
	i := strings.LastIndex(topic, "/")
	prefix := topic[:i+1]
	kind, stem := LetterKind(topic[i+1:])
	if kind == Standard {
		return Standard, "", "", false
	}
	for origin, sub := range origins(topic) {
		if _, ok := n[origin]; ok {
			return kind, origin, sub, true
		}
	}
	if i := strings.LastIndex(stem, "-"); i > 0 && i < len(stem)-1 {
		return kind, prefix + stem[:i], stem[i+1:], false
	}
	return kind, "", "", false
}
