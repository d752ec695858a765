package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

func splitLines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }
func cells(s string) int           { return ansi.StringWidth(s) }
