package wire

// Strings makes the strings of the metadata one reader decodes, sharing those that repeat
// from message to message. The letters of a DLQ carry the same property names, mostly the
// same REAL_TOPIC, reason and redelivery count, and one producer name: a string made for each
// was most of what decoding a letter allocated, and allocating, and collecting what was
// allocated, was a fifth of a replay's reading. It remembers each property name with the last
// value it had, and the last value of each string field, up to sharedMax bytes each; a value
// that differs from the last is made anew, as before. A shared string is exactly the bytes it
// stands for, never part of a larger one, so keeping it keeps nothing else alive. A zero
// Strings is ready; a nil one shares nothing. Not safe for concurrent use.
type Strings struct {
	props  map[string]*lastValue
	fields [numStringFields]string
}

// lastValue is a property name and the last value it had.
type lastValue struct{ key, value string }

// The string fields of a metadata whose last value Strings remembers.
const (
	fieldProducer = iota
	fieldReplicatedFrom
	fieldPartitionKey
	fieldEncryptionAlgo
	fieldUUID
	numStringFields
)

const (
	// sharedMax bounds the strings remembered: a long value (a stack trace in a reason) is
	// rarely the same twice, and remembering it would only hold memory.
	sharedMax = 256
	// propsMax bounds the property names remembered; past it they start over, so a stream of
	// ever-new names costs what it did before sharing and holds at most this many.
	propsMax = 256
)

// field returns the string of raw, the value of string field f.
func (s *Strings) field(f int, raw []byte) string {
	if s == nil || len(raw) > sharedMax {
		return string(raw)
	}
	if s.fields[f] != string(raw) { // compared without a copy
		s.fields[f] = string(raw)
	}
	return s.fields[f]
}

// property returns the strings of a property's name and value.
func (s *Strings) property(key, value []byte) (string, string) {
	if s == nil || len(key) > sharedMax {
		return string(key), string(value)
	}
	lv := s.props[string(key)] // looked up without a copy
	if lv == nil {
		if s.props == nil || len(s.props) >= propsMax {
			s.props = make(map[string]*lastValue)
		}
		lv = &lastValue{key: string(key)}
		s.props[lv.key] = lv
	}
	if len(value) > sharedMax {
		return lv.key, string(value)
	}
	if lv.value != string(value) {
		lv.value = string(value)
	}
	return lv.key, lv.value
}
