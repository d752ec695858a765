package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/letterbox-dev/letterbox/client/termtext"
	"github.com/letterbox-dev/letterbox/tui/common"
)

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// header is the top line: the app, where you are, and — on the right — the endpoint and the
// state of the connection to it.
func (a *App) header() string {
	st := a.c.Styles
	w := a.c.Width
	var state string
	switch a.conn {
	case connUp:
		state = st.OK.Render("● connected")
	case connDown:
		state = st.Error.Render("○ unreachable · retrying")
	default:
		state = st.Subtle.Render("○ connecting")
	}
	if at, stale := a.staleSince(); stale {
		// The broker has not answered a refresh for a whole period: say how old the screen is.
		state = st.Warn.Render("as of "+at.Format("15:04:05")) + " " + state
	}
	// Where the data comes from: the admin URL, and where applications connect when letterbox
	// runs the broker (serviceInHeader).
	urls := []string{termtext.Line(a.c.Source.Endpoint())}
	if svc := a.c.Source.Service(); a.serviceInHeader && svc != "" {
		urls = append([]string{termtext.Line(svc)}, urls...)
	}
	spin := ""
	if a.active().Busy() {
		spin = st.Accent.Render(spinFrames[a.spin%len(spinFrames)]) + " "
	}
	var crumbs []string
	for _, p := range a.stack {
		crumbs = append(crumbs, termtext.Line(p.Title())) // a title may name a letter's topic
	}
	brand := st.Brand.Render("letterbox") + " "
	if b := a.contextBadge(); b != "" {
		brand += b + " "
	}
	if a.c.ReadOnly != "" {
		brand += st.Warn.Render("READ-ONLY") + " "
	}
	// Narrow: the URLs give way (the service URL first) before where you are does, so that
	// the last crumb stays whole while it fits on the line at all.
	need := max(20, ansi.StringWidth(brand)+trailNeed(crumbs))
	var right string
	var room int
	for {
		right = spin + state
		if len(urls) > 0 {
			right = spin + st.Subtle.Render(strings.Join(urls, " ")) + " " + state
		}
		room = w - ansi.StringWidth(right) - 1
		if room >= need || len(urls) == 0 {
			break
		}
		urls = urls[1:]
	}
	trail := fitTrail(crumbs, max(0, room-ansi.StringWidth(brand)-1)) // a space before the right side
	left := common.Pad(brand+st.Text.Render(trail), room, false)
	return st.Header.Render(left + " " + right)
}
