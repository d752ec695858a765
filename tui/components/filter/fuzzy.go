// Package filter is the "/" fuzzy filter: pattern letters must appear in order
// (case-insensitively); matches that are contiguous or start words rank first.
package filter

import (
	"strings"
	"unicode"
	"unicode/utf8"
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

// Fold is s as InOrder takes it: each rune lower-cased as Match compares them.
func Fold(s string) string {
	return strings.Map(unicode.ToLower, s)
}

// InOrder reports what Match's second result reports, for a pattern and a text both folded
// (Fold) beforehand: for filtering long lists, where Match's score is not needed and folding
// every name on every keystroke would cost more than the test itself.
func InOrder(pattern, s string) bool {
	for i := 0; i < len(pattern); i++ {
		if pattern[i] >= utf8.RuneSelf {
			return inOrderRunes(pattern, s)
		}
	}
	// An ASCII pattern, byte by byte in one pass: an ASCII byte of s is always a whole rune
	// (the bytes of longer runes are all ≥ 0x80), and this is what costs at 100,000 names.
	j := 0
	for i := 0; i < len(s) && j < len(pattern); i++ {
		if s[i] == pattern[j] {
			j++
		}
	}
	return j == len(pattern)
}

func inOrderRunes(pattern, s string) bool {
	for _, r := range pattern {
		i := strings.IndexRune(s, r)
		if i < 0 {
			return false
		}
		s = s[i+utf8.RuneLen(r):]
	}
	return true
}
