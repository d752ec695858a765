// Package themes holds letterbox's colour themes: a semantic palette (what a colour means, not
// which colour it is), the built-in themes, and user themes read from TOML files. The TUI takes
// every colour from here; nothing else in the program names a colour.
package themes

import (
	"image/color"
	"slices"
	"strings"

	"charm.land/lipgloss/v2"
)

// Palette names the colours by role. Each value is "#rrggbb", an ANSI colour index ("0"–"255"),
// or "" for the terminal's own default (which is how NO_COLOR is honoured).
type Palette struct {
	Primary    string `toml:"primary"`    // titles, the selected row, focus
	Accent     string `toml:"accent"`     // keys in the footer, highlights, matches
	Subtle     string `toml:"subtle"`     // borders, secondary text, placeholders
	OK         string `toml:"ok"`         // connected, sent, healthy
	Warn       string `toml:"warn"`       // backlog growing, retry counts, stale data
	Error      string `toml:"error"`      // failures, disconnected
	DLQ        string `toml:"dlq"`        // dead-letter topics and messages
	Retry      string `toml:"retry"`      // retry topics and messages
	Text       string `toml:"text"`       // body text
	Background string `toml:"background"` // the app's background; "" keeps the terminal's
	Selection  string `toml:"selection"`  // background of the selected row
}

// Theme is a named palette. Dark tells components whose defaults depend on it (help, inputs)
// which variant to use.
type Theme struct {
	Name    string  `toml:"name"`
	Dark    bool    `toml:"dark"`
	Palette Palette `toml:"palette"`
}

// NoColorName is the theme used when NO_COLOR is set: every colour is the terminal's default,
// and emphasis comes from bold, faint and reverse video alone.
const NoColorName = "no-color"

// Default is the theme used when none is asked for.
const Default = "dark"

var builtin = []Theme{
	{Name: "dark", Dark: true, Palette: Palette{
		Primary: "#7aa2f7", Accent: "#e0af68", Subtle: "#5c6370", OK: "#9ece6a", Warn: "#e0af68",
		Error: "#f7768e", DLQ: "#f7768e", Retry: "#bb9af7", Text: "#c0caf5", Background: "",
		Selection: "#283457",
	}},
	{Name: "light", Dark: false, Palette: Palette{
		Primary: "#2e59c7", Accent: "#a35a00", Subtle: "#8a8f98", OK: "#2d7d2d", Warn: "#a35a00",
		Error: "#c4203a", DLQ: "#c4203a", Retry: "#7a3db8", Text: "#24292f", Background: "",
		Selection: "#d6e2fb",
	}},
	// High contrast: the 16 ANSI colours only, so the terminal's own (often accessibility-tuned)
	// palette decides the exact shades, with bright variants for everything that carries meaning.
	{Name: "high-contrast", Dark: true, Palette: Palette{
		Primary: "15", Accent: "11", Subtle: "7", OK: "10", Warn: "11", Error: "9", DLQ: "9",
		Retry: "13", Text: "15", Background: "0", Selection: "4",
	}},
	// Colour-blind safe: the Okabe–Ito palette, whose colours stay distinct under protanopia,
	// deuteranopia and tritanopia. DLQ (vermillion) and retry (sky blue) never rely on red vs
	// green, and OK is blue-green rather than green.
	{Name: "colour-blind", Dark: true, Palette: Palette{
		Primary: "#56b4e9", Accent: "#e69f00", Subtle: "#999999", OK: "#009e73", Warn: "#f0e442",
		Error: "#d55e00", DLQ: "#d55e00", Retry: "#56b4e9", Text: "#f0f0f0", Background: "",
		Selection: "#0b3a57",
	}},
	{Name: NoColorName, Dark: true},
}

// Builtin returns the built-in themes, in the order they are listed to users.
func Builtin() []Theme { return slices.Clone(builtin) }

// aliases are other spellings users type.
var aliases = map[string]string{
	"colorblind": "colour-blind", "colourblind": "colour-blind", "color-blind": "colour-blind",
	"hc": "high-contrast", "highcontrast": "high-contrast", "nocolor": NoColorName, "none": NoColorName,
}

// Find returns the theme called name among user (which win over built-ins of the same name) and
// the built-ins.
func Find(name string, user []Theme) (Theme, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if a, ok := aliases[name]; ok {
		name = a
	}
	for _, t := range user {
		if strings.EqualFold(t.Name, name) {
			return t, true
		}
	}
	for _, t := range builtin {
		if t.Name == name {
			return t, true
		}
	}
	return Theme{}, false
}

// Names lists the names of user and built-in themes, without duplicates, built-ins first.
func Names(user []Theme) []string {
	var names []string
	for _, t := range builtin {
		names = append(names, t.Name)
	}
	for _, t := range user {
		if !slices.Contains(names, strings.ToLower(t.Name)) {
			names = append(names, t.Name)
		}
	}
	return names
}

// Color turns a palette value into a colour; "" (and anything unparsable) is the terminal's
// default.
func Color(v string) color.Color {
	if strings.TrimSpace(v) == "" {
		return lipgloss.NoColor{}
	}
	return lipgloss.Color(strings.TrimSpace(v))
}

// merge fills the empty fields of p from base.
func (p Palette) merge(base Palette) Palette {
	fill := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	fill(&p.Primary, base.Primary)
	fill(&p.Accent, base.Accent)
	fill(&p.Subtle, base.Subtle)
	fill(&p.OK, base.OK)
	fill(&p.Warn, base.Warn)
	fill(&p.Error, base.Error)
	fill(&p.DLQ, base.DLQ)
	fill(&p.Retry, base.Retry)
	fill(&p.Text, base.Text)
	fill(&p.Background, base.Background)
	fill(&p.Selection, base.Selection)
	return p
}
