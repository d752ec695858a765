package web

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// The headers of a peeked message that carry what its producer wrote: properties, key,
// producer name. A producer may put any bytes in them, and a header holding a control
// character (an ESC, a NUL) or DEL makes the whole response unreadable to Go's HTTP client,
// which refuses such a header line; Go's server would also drop a header whose name is not an
// HTTP token and trim blanks around a value. So what upstream sends raw is made readable here,
// and what that loses travels losslessly beside it:
//
//   - X-Pulsar-PROPERTY, upstream's JSON object of every property (apache/pulsar#20627), is
//     exact: JSON escapes control characters, and DEL, which it does not, is escaped here.
//   - X-Pulsar-PROPERTY-<name>, upstream's older header per property, is sent only for a
//     property whose name is a token and whose value a header holds as it is; the others are
//     in the JSON header alone (a sanitised copy would contradict it in clients, such as
//     pulsaradmin, that read both).
//   - X-Pulsar-partition-key (and the producer name and replicated-from) is sent with each
//     byte a header may not hold written as \xNN; when that changed the key, the exact key
//     follows in X-Pulsar-Base64-partition-key, letterbox's extension (docs/protocol.md).

// setProperties sets the property headers of md.
func setProperties(h http.Header, props []*pb.KeyValue) {
	if len(props) == 0 {
		return
	}
	m := make(map[string]string, len(props))
	for _, kv := range props {
		m[kv.GetKey()] = kv.GetValue()
		if v, exact := headerValue(kv.GetValue()); exact && isToken(kv.GetKey()) {
			h.Set("X-Pulsar-PROPERTY-"+kv.GetKey(), v)
		}
	}
	js, _ := json.Marshal(m)
	h.Set("X-Pulsar-PROPERTY", string(bytes.ReplaceAll(js, []byte{0x7f}, []byte(`\u007f`))))
}

// setKey sets the key headers of a message with partition key key.
func setKey(h http.Header, key string) {
	v, exact := headerValue(key)
	h.Set("X-Pulsar-partition-key", v)
	if !exact {
		h.Set("X-Pulsar-Base64-partition-key", base64.StdEncoding.EncodeToString([]byte(key)))
	}
}

// headerValue is s as a header value every HTTP client reads: each byte a field value may not
// hold (the controls but tab, and DEL) written as \xNN, and so is a blank at either end, which
// would be trimmed. exact is false when s had to change.
func headerValue(s string) (v string, exact bool) {
	n := len(s)
	bad := func(i int) bool {
		c := s[i]
		return (c < 0x20 && c != '\t') || c == 0x7f || ((i == 0 || i == n-1) && (c == ' ' || c == '\t'))
	}
	i := 0
	for i < n && !bad(i) {
		i++
	}
	if i == n {
		return s, true
	}
	var b strings.Builder
	b.WriteString(s[:i])
	const hex = "0123456789abcdef"
	for ; i < n; i++ {
		if bad(i) {
			b.WriteString(`\x`)
			b.WriteByte(hex[s[i]>>4])
			b.WriteByte(hex[s[i]&0xf])
		} else {
			b.WriteByte(s[i])
		}
	}
	return b.String(), false
}

// isToken reports whether s may be (the end of) a header name: an RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
