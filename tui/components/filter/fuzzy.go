// Package filter is the "/" fuzzy filter: pattern letters must appear in order
// (case-insensitively); matches that are contiguous or start words rank first.
package filter

import (
	"strings"
	"unicode"
)

// Match reports whether pattern matches s, and a score (higher is better). An empty pattern
// matches everything with score 0.
func Match(pattern, s string) (int, bool) {
	if pattern == "" {
		return 0, true
	}
	p := []rune(strings.ToLower(pattern))
	r := []rune(s)
	score, pi, prev := 0, 0, -2
	for i := 0; i < len(r) && pi < len(p); i++ {
		if unicode.ToLower(r[i]) != p[pi] {
			continue
		}
		score++
		if i == prev+1 {
			score += 3 // contiguous
		}
		if i == 0 || strings.ContainsRune("/-_.: ", r[i-1]) {
			score += 2 // start of a word
		}
		prev = i
		pi++
	}
	if pi < len(p) {
		return 0, false
	}
	// Whole substring matches win.
	if strings.Contains(strings.ToLower(s), string(p)) {
		score += 10
	}
	return score, true
}
