package resend

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/termtext"
)

// A letter is a stranger's: its key, properties and payload may hold escape sequences or a
// NUL, which a form drawing them as they are would send to the terminal. A field whose text
// holds any is edited quoted (client/termtext: \x1b, \x00, and a backslash as \\) and
// unquoted when sent, so the form shows them visibly and sends exactly what it shows; fields
// without any are edited as they are.

// setText fills field f with v, quoted when v holds what a terminal would act on (block: the
// payload, where newlines and tabs are text).
func (p *Page) setText(f int, v string, block bool) {
	safe := termtext.Line(v) == v
	if block {
		safe = utf8.ValidString(v) && termtext.Block(v) == v
	}
	p.quoted[f] = !safe
	if !safe {
		if block {
			v = termtext.QuoteBlock(v)
		} else {
			v = termtext.Quote(v)
		}
	}
	switch f {
	case fieldTo:
		p.to.SetValue(v)
	case fieldKey:
		p.key.SetValue(v)
	case fieldProps:
		p.props.SetValue(v)
	case fieldPayload:
		p.payload.SetValue(v)
	}
}

// propertyLines are the properties as the form edits them, name=value a line, and whether
// they are quoted (a name's = then written \x3d, as the first = ends the name).
func propertyLines(props map[string]string) (string, bool) {
	var names []string
	quoted := false
	props = dlqops.StartEdit(nil, "", props).Properties // what a resend keeps
	for _, k := range slices.Sorted(maps.Keys(props)) {
		names = append(names, k)
		quoted = quoted || termtext.Line(k) != k || termtext.Line(props[k]) != props[k]
	}
	lines := make([]string, len(names))
	for i, k := range names {
		if quoted {
			lines[i] = strings.ReplaceAll(termtext.Quote(k), "=", `\x3d`) + "=" + termtext.Quote(props[k])
		} else {
			lines[i] = k + "=" + props[k]
		}
	}
	return strings.Join(lines, "\n"), quoted
}

// text is field f's text as it is to be sent: unquoted when the field is quoted.
func (p *Page) text(f int, name, v string) (string, error) {
	if !p.quoted[f] {
		return v, nil
	}
	s, err := termtext.Unquote(v)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// quotedHint says how quoted fields are written, "" when none is.
func (p *Page) quotedHint() string {
	for _, q := range p.quoted {
		if q {
			return `this letter holds control characters: they show as \x1b (a backslash as \\), and are sent as they were · `
		}
	}
	return ""
}
