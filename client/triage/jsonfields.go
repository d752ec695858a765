package triage

import (
	"bytes"
	"encoding/json"
)

// jsonFields reports whether b is valid JSON and, when it is an object, calls fn with the name
// of each of its top-level fields. It walks the document once after validating it, without
// decoding the values: a facet needs the names only, for every letter of a large DLQ.
func jsonFields(b []byte, fn func(name string)) bool {
	if !json.Valid(b) {
		return false
	}
	i := skipSpace(b, 0)
	if b[i] != '{' {
		return true
	}
	i = skipSpace(b, i+1)
	if b[i] == '}' {
		return true
	}
	for i < len(b) {
		end := stringEnd(b, i)
		fn(unquote(b[i:end]))
		i = skipSpace(b, end)
		i = skipValue(b, skipSpace(b, i+1)) // past the colon and the value
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ',' {
			break
		}
		i = skipSpace(b, i+1)
	}
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index just after the string starting at b[i] (a quote).
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// skipValue returns the index just after the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	for j := i; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
	}
	return len(b)
}

// unquote is the JSON string q (quotes included) as Go text.
func unquote(q []byte) string {
	if len(q) >= 2 && bytes.IndexByte(q, '\\') < 0 {
		return string(q[1 : len(q)-1])
	}
	var s string
	if err := json.Unmarshal(q, &s); err != nil {
		return string(q)
	}
	return s
}
