package userconfig

import (
	"fmt"
	"strings"
)

// positions locates tables and keys in the file, for messages. The TOML decoder reports lines
// only for syntax errors, so this is a light scan of its own: a table header is a line that
// starts with "[", a key a line "key = …" (multi-line strings may fool it; a message then
// names the table's line instead of the key's).
type positions struct {
	name     string
	top      map[string]int   // key → line, before any table
	contexts []map[string]int // per [[context]]: "" → header line, key → line
}

func scanLines(name, text string) positions {
	p := positions{name: name, top: map[string]int{}}
	var cur map[string]int // nil: top level; else the current [[context]]
	other := false         // inside some other table
	for i, l := range strings.Split(text, "\n") {
		n := i + 1
		l = strings.TrimSpace(l)
		switch {
		case l == "" || l[0] == '#':
			continue
		case strings.HasPrefix(l, "[["):
			h := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(stripComment(l)[2:]), "]]"))
			if h == "context" {
				cur, other = map[string]int{"": n}, false
				p.contexts = append(p.contexts, cur)
			} else {
				cur, other = nil, true
			}
			continue
		case l[0] == '[':
			cur, other = nil, true
			continue
		}
		k, _, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		k = strings.Trim(strings.TrimSpace(k), `"'`)
		switch {
		case cur != nil:
			if _, dup := cur[k]; !dup {
				cur[k] = n
			}
		case !other:
			if _, dup := p.top[k]; !dup {
				p.top[k] = n
			}
		}
	}
	return p
}

func stripComment(l string) string {
	if i := strings.Index(l, "#"); i >= 0 {
		return l[:i]
	}
	return l
}

func (p positions) at(line int) string { return fmt.Sprintf("%s:%d", p.name, line) }

// context is the position of the i-th [[context]] and of its keys.
func (p positions) context(i int) (string, map[string]string) {
	if i >= len(p.contexts) {
		return p.name, nil
	}
	keys := map[string]string{}
	for k, n := range p.contexts[i] {
		if k != "" {
			keys[k] = p.at(n)
		}
	}
	return p.at(p.contexts[i][""]), keys
}

// topKey is the position of a top-level key, "" when not found.
func (p positions) topKey(k string) string {
	if n, ok := p.top[k]; ok {
		return p.at(n)
	}
	return ""
}

// firstKey is the position of key in the first [[context]] that has it.
func (p positions) firstKey(k string) string {
	for _, c := range p.contexts {
		if n, ok := c[k]; ok {
			return p.at(n)
		}
	}
	return p.name
}
