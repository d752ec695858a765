package replay

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// Properties a replay writes on every republished message.
const (
	// PropertyReplayedFrom is the id of the dead letter the message was republished from
	// ("ledger:entry:partition", plus ":batchIndex" for a message of a batch).
	PropertyReplayedFrom = "REPLAYED_FROM"
	// PropertyReplayCount is how many times the message has been replayed; it rides along
	// when the message dies again, and the loop guard reads it.
	PropertyReplayCount = "REPLAY_COUNT"
)

// bookkeeping are the DLQ and retry properties dropped on replay: left in place, the retry
// machinery would read a republished message as being on its Nth retry hop already, and
// REAL_TOPIC / ORIGIN ids of the first death would survive the next one.
var bookkeeping = []string{
	client.PropertyRealTopic,
	client.PropertyOriginMessageID,
	client.PropertyOriginMessageIDOld,
	client.PropertyReconsumeTimes,
	client.PropertyDelayTime,
	client.PropertyRetryTopic,
}

// IsBookkeeping reports whether a property is one a replay drops: the DLQ and retry flows'
// own, which would make a republished message look like it is on its way to the DLQ again.
func IsBookkeeping(name string) bool { return slices.Contains(bookkeeping, name) }

// qualify is topic's full name by client/naming's rules (short names as the clients expand
// them); a name that is no topic name is left as it is, for the client to refuse.
func qualify(topic string) string {
	if t, err := naming.ParseTopic(topic); err == nil {
		return t.String()
	}
	return topic
}

// derivedDestination is the origin topic a DLQ named <topic>-<subscription>-DLQ was derived
// from (client/naming's rule; a DLQ partition's name as its topic's): the longest such <topic>
// among known (fully qualified, partitioned ones by base name); without known topics, the name
// with "-<sub>-DLQ" removed when it ends so.
func derivedDestination(dlq, sub string, known []string) string {
	dlq = qualify(dlq)
	if len(known) > 0 {
		full := make([]string, len(known))
		for i, k := range known {
			full[i] = qualify(k)
		}
		if kind, origin, _, named := naming.FromName(dlq, full); kind == naming.DeadLetter && named {
			return origin
		}
		return ""
	}
	if kind, stem := naming.LetterKind(dlq); kind == naming.DeadLetter && sub != "" {
		if t, ok := strings.CutSuffix(stem, "-"+sub); ok && !strings.HasSuffix(t, "/") {
			return t
		}
	}
	return ""
}

// replayCount is the replay counter of m (0 when absent or unreadable).
func replayCount(m *client.Message) int {
	s := m.Properties[PropertyReplayCount]
	if s == "" {
		return 0 // most letters were never replayed: no error to make and drop
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// idString is the dead letter's id as REPLAYED_FROM and the reports write it.
func idString(id client.MessageID) string {
	// id.String() and the batch index, without fmt: one is made for every letter moved.
	var buf [48]byte // four int64s and their colons fit: only the string is allocated
	b := buf[:0]
	b = strconv.AppendInt(b, id.Ledger, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, id.Entry, 10)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(max(id.Partition, 0)), 10)
	if id.BatchIndex >= 0 {
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(id.BatchIndex), 10)
	}
	return string(b)
}

// EditedProperties are the properties a resend of m edited as ed says sends: ed's own, with
// the bookkeeping of a replay of m (REPLAYED_FROM, REPLAY_COUNT) over them, as the engine sends
// them and as a person about to confirm the resend is shown them.
func EditedProperties(m *client.Message, ed Edit) map[string]string {
	props := maps.Clone(ed.Properties)
	if props == nil {
		props = make(map[string]string, 2)
	}
	props[PropertyReplayedFrom] = idString(m.ID)
	props[PropertyReplayCount] = strconv.Itoa(replayCount(m) + 1)
	return props
}

// republished makes out the message that carries m back to its origin. It takes m's
// properties for its own, rather than copying them for every letter: nothing reads a dead
// letter's properties once it is decided, and m is left without any. out is the reader's one
// message, reused for every letter (SendAsync keeps nothing of it).
func republished(out, m *client.Message, count int) *client.Message {
	props := m.Properties
	m.Properties = nil
	if props == nil {
		props = make(map[string]string, 2)
	}
	for _, k := range bookkeeping {
		delete(props, k)
	}
	props[PropertyReplayedFrom] = idString(m.ID)
	props[PropertyReplayCount] = strconv.Itoa(count + 1)
	*out = client.Message{
		Payload:     m.Payload,
		Key:         m.Key,
		OrderingKey: m.OrderingKey,
		Properties:  props,
		EventTime:   m.EventTime,
		// The dead letter keeps the schema version its writer stamped.
		SchemaVersion: m.SchemaVersion,
	}
	return out
}
