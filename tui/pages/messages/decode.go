package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hamba/avro/v2"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// Decoding modes, in the order "d" cycles through them.
const (
	DecodeAuto = iota
	DecodeJSON
	DecodeString
	DecodeHex
	decodeModes
)

var decodeNames = []string{"auto", "json", "string", "hex"}

// decoder turns payloads into text, using the topic's schema when it has one.
type decoder struct {
	schema *data.SchemaInfo
	avro   avro.Schema // parsed once, when the topic's schema is AVRO
}

func newDecoder(s *data.SchemaInfo) decoder {
	d := decoder{schema: s}
	if s != nil && strings.EqualFold(s.Type, "AVRO") && s.Definition != "" {
		if as, err := avro.Parse(s.Definition); err == nil {
			d.avro = as
		}
	}
	return d
}

// decode renders payload in mode; it returns the text and the form it chose ("json", "avro→json",
// "string", "hex").
func (d decoder) decode(payload []byte, mode int) (string, string) {
	switch mode {
	case DecodeJSON:
		if s, ok := prettyJSON(payload); ok {
			return s, "json"
		}
		if s, ok := d.fromAvro(payload); ok {
			return s, "avro→json"
		}
		return "not JSON: " + hexDump(payload), "hex"
	case DecodeString:
		return strings.ToValidUTF8(string(payload), "�"), "string"
	case DecodeHex:
		return hexDump(payload), "hex"
	}
	if s, ok := d.fromAvro(payload); ok {
		return s, "avro→json"
	}
	if s, ok := prettyJSON(payload); ok {
		return s, "json"
	}
	if printable(payload) {
		return string(payload), "string"
	}
	return hexDump(payload), "hex"
}

func (d decoder) fromAvro(payload []byte) (string, bool) {
	if d.avro == nil {
		return "", false
	}
	var v any
	if err := avro.Unmarshal(d.avro, payload, &v); err != nil {
		return "", false
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", false
	}
	return string(b), true
}

func prettyJSON(b []byte) (string, bool) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') || !json.Valid(t) {
		return "", false
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, t, "", "  "); err != nil {
		return "", false
	}
	return buf.String(), true
}

func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) && !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// hexDump is the classic 16-bytes-a-line dump with offsets and an ASCII column.
func hexDump(b []byte) string {
	var s strings.Builder
	for off := 0; off < len(b); off += 16 {
		end := min(off+16, len(b))
		fmt.Fprintf(&s, "%08x  ", off)
		for i := off; i < off+16; i++ {
			if i < end {
				fmt.Fprintf(&s, "%02x ", b[i])
			} else {
				s.WriteString("   ")
			}
			if i == off+7 {
				s.WriteByte(' ')
			}
		}
		s.WriteString(" |")
		for _, c := range b[off:end] {
			if c >= 0x20 && c < 0x7f {
				s.WriteByte(c)
			} else {
				s.WriteByte('.')
			}
		}
		s.WriteString("|\n")
	}
	return strings.TrimSuffix(s.String(), "\n")
}

// preview is a one-line summary of a payload for the list.
func (d decoder) preview(payload []byte) string {
	text, form := d.decode(payload, DecodeAuto)
	if form == "hex" {
		return "<" + common.Plural(len(payload), "byte") + " binary>"
	}
	if form == "json" || form == "avro→json" {
		var buf bytes.Buffer
		src := []byte(text)
		if json.Compact(&buf, src) == nil {
			return buf.String()
		}
	}
	return strings.Join(strings.Fields(text), " ")
}
