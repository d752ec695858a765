package replay

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/input"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// options are the run's controls, those of `letterbox replay`: a destination for every
// selected letter, a rate, a limit, the loop guard and a new run instead of resuming. They are
// edited in a form over the preview; applying them previews again, since they change what
// moves.
type options struct {
	open   bool
	focus  int
	fields []field
	err    string
}

type field struct {
	label      string
	in         input.Model
	replayOnly bool // a discard sends nothing: destination, rate and loop guard do not apply
}

const (
	optDestination = iota
	optRate
	optLimit
	optMaxReplays
	optNew
)

func newOptions(c *common.Common, req data.ReplayRequest) options {
	mk := func(label, placeholder, value string, replayOnly bool) field {
		in := input.New(c, "", placeholder)
		in.SetValue(value)
		return field{label: label, in: in, replayOnly: replayOnly}
	}
	num := func(v float64) string {
		if v == 0 {
			return ""
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	maxReplays := ""
	if req.MaxReplays != 0 {
		maxReplays = strconv.Itoa(req.MaxReplays)
	}
	newRun := "no"
	if req.New {
		newRun = "yes"
	}
	dest := ""
	if req.Destination != "" {
		dest = naming.ShortName(req.Destination, "")
	}
	return options{fields: []field{
		mk("destination", "each letter's origin (or a topic for all of them)", dest, true),
		mk("rate", "no limit (messages a second)", num(req.Rate), true),
		mk("limit", "all selected (at most this many)", num(float64(req.Limit)), false),
		mk("max replays", "3: skip letters replayed this often (-1: no guard)", maxReplays, true),
		mk("new run", "no: resume an interrupted run of the same replay", newRun, true),
	}}
}

// setWidth gives the fields the width of a line after their labels, so that a hint such as
// "(-1: no guard)" is never cut where the screen has room for it.
func (o *options) setWidth(w int) {
	for i := range o.fields {
		o.fields[i].in.SetWidth(max(20, w-labelWidth))
	}
}

// labelWidth is what a field's label takes on its line (optionsView).
const labelWidth = 14

// openForm shows the form, its first field that applies in focus.
func (o *options) openForm() {
	o.open, o.err = true, ""
	o.setFocus(0)
}

func (o *options) setFocus(i int) {
	o.focus = i
	for j := range o.fields {
		if j == i {
			o.fields[j].in.Focus()
		} else {
			o.fields[j].in.Blur()
		}
	}
}

// visible are the indexes of the fields that apply to the run.
func (p *Page) visible() []int {
	var out []int
	for i, f := range p.opts.fields {
		if !f.replayOnly || !p.req.Discard {
			out = append(out, i)
		}
	}
	return out
}

// optionsKey edits the form: tab and shift+tab (or ↑↓) move, enter applies and previews
// again, esc closes it unchanged.
func (p *Page) optionsKey(msg tea.KeyPressMsg) tea.Cmd {
	vis := p.visible()
	pos := 0
	for i, f := range vis {
		if f == p.opts.focus {
			pos = i
		}
	}
	switch {
	case msg.String() == "esc":
		p.opts = newOptions(p.c, p.req)
		p.opts.setWidth(p.w)
		return nil
	case key.Matches(msg, keyNextField):
		p.opts.setFocus(vis[(pos+1)%len(vis)])
		return nil
	case key.Matches(msg, keyPrevField):
		p.opts.setFocus(vis[(pos+len(vis)-1)%len(vis)])
		return nil
	case msg.String() == "enter":
		req, err := p.applyOptions()
		if err != nil {
			p.opts.err = err.Error()
			return nil
		}
		p.req = req
		p.opts.open = false
		for i := range p.opts.fields {
			p.opts.fields[i].in.Blur()
		}
		return p.start(true)
	}
	var cmd tea.Cmd
	f := &p.opts.fields[p.opts.focus]
	f.in, cmd = f.in.Update(msg)
	return cmd
}

// applyOptions reads the form into a copy of the request, or says what is wrong.
func (p *Page) applyOptions() (data.ReplayRequest, error) {
	req := p.req
	val := func(i int) string { return strings.TrimSpace(p.opts.fields[i].in.Value()) }
	req.Destination = ""
	if v := val(optDestination); v != "" && !p.req.Discard {
		req.Destination = data.ParseTopic(v).String()
	}
	rate, err := optNumber(val(optRate), "rate")
	if err != nil {
		return req, err
	}
	limit, err := optNumber(val(optLimit), "limit")
	if err != nil {
		return req, err
	}
	req.Rate, req.Limit = rate, int64(limit)
	req.MaxReplays = 0
	if v := val(optMaxReplays); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n == 0 {
			return req, fmt.Errorf("max replays: want a number of times (-1: no loop guard), not %q", v)
		}
		req.MaxReplays = n
	}
	switch strings.ToLower(val(optNew)) {
	case "", "no", "n":
		req.New = false
	case "yes", "y":
		req.New = true
	default:
		return req, fmt.Errorf("new run: yes or no, not %q", val(optNew))
	}
	return req, nil
}

func optNumber(v, what string) (float64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: want a number ≥ 0 (empty: no %s), not %q", what, what, v)
	}
	return n, nil
}

// optionsView is the form, a line per field that applies.
func (p *Page) optionsView() []string {
	st := p.c.Styles
	out := []string{st.Title.Render("Controls") + st.Subtle.Render(" · enter applies and previews again · esc leaves them as they were")}
	for _, i := range p.visible() {
		f := p.opts.fields[i]
		label := st.Subtle.Render(fmt.Sprintf(" %-12s ", f.label))
		if i == p.opts.focus {
			label = st.Accent.Render(fmt.Sprintf("›%-12s ", f.label))
		}
		out = append(out, common.Trunc(label+f.in.View(), p.w))
	}
	if p.opts.err != "" {
		out = append(out, st.Paint(&st.Error, common.Trunc("✗ "+p.opts.err, p.w)))
	}
	return out
}

// controls says how the run is set, for the preview and the confirmation.
func (p *Page) controls() string {
	var parts []string
	if p.req.Destination != "" {
		parts = append(parts, "all to "+naming.ShortName(p.req.Destination, ""))
	}
	if p.req.Rate > 0 {
		parts = append(parts, fmt.Sprintf("at most %s msg/s", strconv.FormatFloat(p.req.Rate, 'f', -1, 64)))
	}
	if p.req.Limit > 0 {
		parts = append(parts, "at most "+common.Plural(int(p.req.Limit), "letter"))
	}
	switch {
	case p.req.MaxReplays < 0 && !p.req.Discard:
		parts = append(parts, "no loop guard")
	case p.req.MaxReplays > 0 && !p.req.Discard:
		parts = append(parts, fmt.Sprintf("loop guard %d", p.req.MaxReplays))
	}
	if p.req.New && !p.req.Discard {
		parts = append(parts, "a new run")
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " · ")
}
