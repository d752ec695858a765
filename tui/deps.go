package tui

// The Bubble Tea v2 stack; the imports keep `go mod tidy` from dropping it while the TUI grows.
import (
	_ "charm.land/bubbles/v2/key"
	_ "charm.land/bubbletea/v2"
)
