package main

import "testing"

// The page line is found on both screens the bench browses: the dead letters screen says
// "backlog positions" (or, counting letters, "letters 51–100 of the backlog"), the messages
// screen "positions".
func TestPageLine(t *testing.T) {
	for _, tt := range []struct{ screen, want string }{
		{"Dead letters x · via s · backlog 1.0M · from y\n✓ healthy\nbacklog positions 1–50\n", "positions 1–50 · backlog 1.0M"},
		{"Messages x · backlog 12\n  positions 51–100\n", "positions 51–100 · backlog 12"},
		{"Dead letters x · via s · 1,000,000 letters · from y\n✓ healthy\nletters 51–100 of the backlog · ] next\n", "positions 51–100"},
		{"no page here\n", ""},
	} {
		if got := pageLine(tt.screen); got != tt.want {
			t.Errorf("pageLine(%q) = %q, want %q", tt.screen, got, tt.want)
		}
	}
}
