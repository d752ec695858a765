// Package helptext turns the parts of letterbox's Markdown documentation marked for a help
// topic into text for a terminal, so that `letterbox help TOPIC` and docs/ are one text.
//
// A topic's parts are marked in the Markdown with HTML comments, which renderers do not show:
//
//	<!-- letterbox help filter: begin -->
//	...
//	<!-- letterbox help filter: end -->
//
// A topic may have several marked parts, in one file or several; they are printed in order.
// The Markdown is the subset the docs use: headings, paragraphs, lists (nested by indentation),
// fenced code blocks and pipe tables, with `code`, **bold**, *emphasis* and [links](target)
// inline.
package helptext

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Width is the column text is wrapped at, as man pages are for an 80-column terminal.
const Width = 80

// marker matches a part's begin or end line.
var marker = regexp.MustCompile(`^<!-- letterbox help ([a-z0-9-]+): (begin|end) -->$`)

// Extract returns the Markdown of topic's parts in doc, in order, separated by blank lines; ""
// when doc marks none. A begin without its end, or an end without its begin, is an error.
func Extract(doc, topic string) (string, error) {
	var parts []string
	var cur []string
	open := false
	for n, line := range strings.Split(doc, "\n") {
		m := marker.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			if open {
				cur = append(cur, line)
			}
			continue
		}
		if m[1] != topic {
			continue
		}
		switch {
		case m[2] == "begin" && open:
			return "", fmt.Errorf("line %d: %s begins again before its end", n+1, topic)
		case m[2] == "begin":
			open, cur = true, nil
		case !open:
			return "", fmt.Errorf("line %d: %s ends before it begins", n+1, topic)
		default:
			open = false
			parts = append(parts, strings.Trim(strings.Join(cur, "\n"), "\n"))
		}
	}
	if open {
		return "", errors.New(topic + " begins and never ends")
	}
	return strings.Join(parts, "\n\n"), nil
}

// Topics lists the topics doc marks, in the order they first appear.
func Topics(doc string) []string {
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(doc, "\n") {
		if m := marker.FindStringSubmatch(strings.TrimSpace(line)); m != nil && !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	return out
}

// Render turns Markdown into plain text wrapped at Width: headings stand alone, paragraphs and
// list items are filled, code blocks are indented and kept as they are, table rows become a
// line for their first cell and the other cells indented under it.
func Render(md string) string {
	var out []string
	blank := func() {
		if len(out) > 0 && out[len(out)-1] != "" {
			out = append(out, "")
		}
	}
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "<!--"):
			i++
		case strings.HasPrefix(trimmed, "```"):
			blank()
			i++
			for ; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				out = append(out, strings.TrimRight("    "+lines[i], " "))
			}
			i++ // the closing fence
			blank()
		case strings.HasPrefix(trimmed, "#"):
			blank()
			out = append(out, inline(strings.TrimSpace(strings.TrimLeft(trimmed, "#"))))
			blank()
			i++
		case strings.HasPrefix(trimmed, "|"):
			blank()
			var rows [][]string
			for ; i < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i]), "|"); i++ {
				rows = append(rows, cells(lines[i]))
			}
			out = append(out, table(rows)...)
			blank()
		case listItem(line) != "":
			// One item: its first line and the lines indented under it that start no item.
			indent := len(line) - len(strings.TrimLeft(line, " "))
			bullet := listItem(line)
			text := []string{strings.TrimSpace(line)[len(bullet):]}
			for i++; i < len(lines); i++ {
				next := lines[i]
				t := strings.TrimSpace(next)
				// A line indented less than the item's text continues an outer item as
				// a paragraph of its own.
				if t == "" || listItem(next) != "" || strings.HasPrefix(t, "```") || strings.HasPrefix(t, "|") ||
					len(next)-len(strings.TrimLeft(next, " ")) < indent+len(bullet) {
					break
				}
				text = append(text, t)
			}
			lead := strings.Repeat(" ", indent) + bullet
			out = append(out, fill(inline(strings.Join(text, " ")), lead, strings.Repeat(" ", len(lead)))...)
		default:
			// A paragraph; indented, it belongs to the list item above it.
			lead := strings.Repeat(" ", len(line)-len(strings.TrimLeft(line, " ")))
			var text []string
			for ; i < len(lines); i++ {
				t := strings.TrimSpace(lines[i])
				if t == "" || listItem(lines[i]) != "" || strings.HasPrefix(t, "```") || strings.HasPrefix(t, "|") ||
					strings.HasPrefix(t, "#") || strings.HasPrefix(t, "<!--") {
					break
				}
				text = append(text, t)
			}
			if lead == "" {
				blank()
			}
			out = append(out, fill(inline(strings.Join(text, " ")), lead, lead)...)
			if lead == "" {
				blank()
			}
		}
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n") + "\n"
}

var bulletRE = regexp.MustCompile(`^(?:[-*]|\d+\.) `)

// listItem returns the bullet ("- ", "1. ") that line starts with, or "".
func listItem(line string) string {
	return bulletRE.FindString(strings.TrimLeft(line, " "))
}

// cells splits a table row into its trimmed cells.
func cells(row string) []string {
	row = strings.TrimSpace(row)
	row = strings.TrimSuffix(strings.TrimPrefix(row, "|"), "|")
	var out []string
	for _, c := range splitCells(row) {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

// splitCells splits on the pipes that are neither inside `code` nor escaped (\|, which a
// table cell writes a pipe with), and unescapes those.
func splitCells(row string) []string {
	var out []string
	inCode := false
	start := 0
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			i++
		case row[i] == '`':
			inCode = !inCode
		case row[i] == '|' && !inCode:
			out = append(out, row[start:i])
			start = i + 1
		}
	}
	out = append(out, row[start:])
	for i, c := range out {
		out[i] = strings.ReplaceAll(c, `\|`, "|")
	}
	return out
}

var separatorRE = regexp.MustCompile(`^:?-+:?$`)

// table renders rows, the first of them the header when a separator row follows it: the
// header is left out, each row's first cell is a line and its other cells are filled under it.
func table(rows [][]string) []string {
	if len(rows) > 1 && isSeparator(rows[1]) {
		rows = rows[2:]
	}
	var out []string
	for _, r := range rows {
		if len(r) == 0 || isSeparator(r) {
			continue
		}
		out = append(out, fill(inline(r[0]), "  ", "  ")...)
		for _, c := range r[1:] {
			if c != "" {
				out = append(out, fill(inline(c), "      ", "      ")...)
			}
		}
	}
	return out
}

func isSeparator(r []string) bool {
	for _, c := range r {
		if !separatorRE.MatchString(c) {
			return false
		}
	}
	return len(r) > 0
}

var (
	codeRE   = regexp.MustCompile("`([^`]*)`")
	linkRE   = regexp.MustCompile(`\[([^\]]+)\]\(([^)]+)\)`)
	strongRE = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	emRE     = regexp.MustCompile(`(^|[\s(])\*([^*\s][^*]*)\*`)
)

// inline drops the inline markup: code spans keep their text as it is (and their backquotes
// when the text starts or ends with a space), links become their text and where they lead (a
// page of docs/, a web address; not an anchor of the same page).
func inline(s string) string {
	// Code spans first, so that nothing inside them is taken for markup: each is set aside
	// and put back at the end.
	var spans []string
	s = codeRE.ReplaceAllStringFunc(s, func(m string) string {
		span := m[1 : len(m)-1]
		if strings.TrimSpace(span) != span {
			// Its spaces are its point (` and `): without the quotes they would vanish.
			span = m
		}
		spans = append(spans, span)
		return fmt.Sprintf("\x00%d\x00", len(spans)-1)
	})
	s = linkRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := linkRE.FindStringSubmatch(m)
		text, target := sub[1], sub[2]
		switch {
		case strings.HasPrefix(target, "#"):
			return text
		case strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://"):
			return text + " (" + target + ")"
		}
		page, _, _ := strings.Cut(target, "#")
		if !strings.Contains(page, "/") {
			page = "docs/" + page
		}
		return text + " (" + page + ")"
	})
	s = strongRE.ReplaceAllString(s, "$1")
	s = emRE.ReplaceAllString(s, "$1$2")
	for i, span := range spans {
		s = strings.Replace(s, fmt.Sprintf("\x00%d\x00", i), span, 1)
	}
	return s
}

// fill wraps text at Width: the first line starts with first, the others with rest.
func fill(text, first, rest string) []string {
	var out []string
	line := first
	empty := true
	for _, w := range strings.Fields(text) {
		if !empty && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > Width {
			out = append(out, line)
			line, empty = rest, true
		}
		if !empty {
			line += " "
		}
		line += w
		empty = false
	}
	if !empty {
		out = append(out, line)
	}
	return out
}
