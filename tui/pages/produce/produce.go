// Package produce is the produce screen: send one test message (key, properties, payload,
// delay) to a topic. Every field is an input, so plain letters type; tab moves between fields,
// ctrl+s sends, esc goes back.
package produce

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/input"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// SentMsg reports a sent message.
type SentMsg struct {
	common.Fresh
	Topic string
	ID    string
}

const (
	fieldKey = iota
	fieldProps
	fieldDelay
	fieldPayload
	fields
)

// Page is the produce screen.
type Page struct {
	c       *common.Common
	topic   string
	key     input.Model
	props   input.Model
	delay   input.Model
	payload textarea.Model
	focus   int
	sending bool
	sent    []string // ids sent from this screen, newest last
	// askEmpty: ctrl+s with an empty payload asks first; the next key answers.
	askEmpty bool
	w, h     int
}

// New returns the produce screen for topic.
func New(c *common.Common, topic string) *Page {
	p := &Page{c: c, topic: topic}
	p.key = input.New(c, "", "optional, e.g. order-1001")
	p.props = input.New(c, "", "k=v, k2=v2")
	p.delay = input.New(c, "", "0s (deliver now), e.g. 30s or 5m")
	p.payload = input.NewArea(c, "the payload: any text, JSON… (empty: ctrl+s asks before sending nothing)")
	p.setFocus(fieldKey)
	return p
}

func (p *Page) setFocus(f int) {
	p.focus = f
	p.key.Blur()
	p.props.Blur()
	p.delay.Blur()
	p.payload.Blur()
	switch f {
	case fieldKey:
		p.key.Focus()
	case fieldProps:
		p.props.Focus()
	case fieldDelay:
		p.delay.Focus()
	case fieldPayload:
		_ = p.payload.Focus()
	}
}

func (p *Page) Init() tea.Cmd   { return nil }
func (p *Page) Title() string   { return "produce" }
func (p *Page) Capturing() bool { return true }
func (p *Page) Busy() bool      { return p.sending }
func (p *Page) Close()          {}
func (p *Page) SetSize(w, h int) {
	p.w, p.h = w, h
	fw := max(10, w-14)
	p.key.SetWidth(fw)
	p.props.SetWidth(fw)
	p.delay.SetWidth(fw)
	p.payload.SetWidth(max(10, w-2))
	p.payload.SetHeight(max(3, h-10))
}

// request builds the message from the fields, or says what is wrong with them.
func (p *Page) request() (data.ProduceRequest, error) {
	req := data.ProduceRequest{Key: strings.TrimSpace(p.key.Value()), Payload: []byte(p.payload.Value())}
	if s := strings.TrimSpace(p.props.Value()); s != "" {
		req.Properties = map[string]string{}
		for _, kv := range strings.Split(s, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
			if !ok || strings.TrimSpace(k) == "" {
				return req, fmt.Errorf("property %q: want key=value", strings.TrimSpace(kv))
			}
			req.Properties[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if s := strings.TrimSpace(p.delay.Value()); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return req, fmt.Errorf("delay %q: want a duration such as 30s or 5m", s)
		}
		req.Delay = d
	}
	return req, nil
}

func (p *Page) Update(msg tea.Msg) (common.Page, tea.Cmd) {
	k := p.c.Keys
	switch msg := msg.(type) {
	case SentMsg:
		if msg.Topic == p.topic {
			p.sending = false
			p.sent = append(p.sent, msg.ID)
			return p, func() tea.Msg { return common.StatusMsg("sent " + msg.ID + " to " + naming.ShortName(p.topic, "")) }
		}
	case common.ErrorMsg:
		p.sending = false // the status line says why
	case tea.KeyPressMsg:
		if p.askEmpty { // an empty payload is sent on y only
			p.askEmpty = false
			if msg.String() == "y" {
				return p, p.send(true)
			}
			return p, nil
		}
		switch {
		case key.Matches(msg, k.Back):
			return p, common.Back
		case key.Matches(msg, k.Send):
			return p, p.send(false)
		case key.Matches(msg, k.NextField):
			p.setFocus((p.focus + 1) % fields)
			return p, nil
		case key.Matches(msg, k.PrevField):
			p.setFocus((p.focus + fields - 1) % fields)
			return p, nil
		case msg.String() == "enter" && p.focus != fieldPayload:
			p.setFocus(p.focus + 1)
			return p, nil
		}
		var cmd tea.Cmd
		switch p.focus {
		case fieldKey:
			p.key, cmd = p.key.Update(msg)
		case fieldProps:
			p.props, cmd = p.props.Update(msg)
		case fieldDelay:
			p.delay, cmd = p.delay.Update(msg)
		case fieldPayload:
			p.payload, cmd = p.payload.Update(msg)
		}
		return p, cmd
	default:
		if p.focus == fieldPayload {
			var cmd tea.Cmd
			p.payload, cmd = p.payload.Update(msg)
			return p, cmd
		}
	}
	return p, nil
}

// send sends the message the fields say; an empty payload only once asked about (emptyOK).
func (p *Page) send(emptyOK bool) tea.Cmd {
	if p.sending {
		return nil
	}
	req, err := p.request()
	if err != nil {
		// On the status line, where it replaces what the last send said.
		return func() tea.Msg { return common.ErrorMsg{What: "not sent", Err: err} }
	}
	if len(req.Payload) == 0 && !emptyOK {
		p.askEmpty = true
		return nil
	}
	p.sending = true
	t := p.topic
	return common.Load(p.c, "produce", func(ctx context.Context, s data.Source) (string, error) {
		return s.Produce(ctx, t, req)
	}, func(id string) tea.Msg { return SentMsg{Topic: t, ID: id} })
}

func (p *Page) View() string {
	st := p.c.Styles
	label := func(f int, s string) string {
		if p.focus == f {
			return st.Title.Render(fmt.Sprintf("▌%-11s", s))
		}
		return st.Subtle.Render(fmt.Sprintf(" %-11s", s))
	}
	lines := []string{
		st.Title.Render("Produce to "+naming.ShortName(p.topic, "")) + st.Subtle.Render(" · one test message"),
		"",
		label(fieldKey, "key") + " " + p.key.View(),
		label(fieldProps, "properties") + " " + p.props.View(),
		label(fieldDelay, "delay") + " " + p.delay.View(),
		label(fieldPayload, "payload"),
		p.payload.View(),
	}
	switch {
	case p.askEmpty:
		lines = append(lines, st.Warn.Render(common.Trunc("The payload is empty: send a message without one? y yes · any other key no", p.w)))
	case p.sending:
		lines = append(lines, st.Subtle.Render("sending…"))
	case len(p.sent) > 0:
		lines = append(lines, st.OK.Render(fmt.Sprintf("✓ sent %s, last id %s", common.Plural(len(p.sent), "message"), p.sent[len(p.sent)-1])))
	}
	return common.Lines(strings.Join(lines, "\n"), p.w, p.h)
}

func (p *Page) ShortHelp() []key.Binding {
	k := p.c.Keys
	if p.askEmpty {
		return []key.Binding{key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "send it empty")),
			key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "no"))}
	}
	return []key.Binding{k.Send, k.NextField, k.PrevField, withDesc(k.Back, "back")}
}

func (p *Page) FullHelp() []common.HelpSection {
	k := p.c.Keys
	return []common.HelpSection{{Title: "Produce", Keys: []key.Binding{k.Send, k.NextField, withDesc(k.PrevField, "previous field"),
		withDesc(k.Enter, "next field (a new line in the payload)"), withDesc(k.Back, "back, nothing sent"),
		key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "send an empty payload, when asked"))}}, input.EditingHelp(true)}
}

func withDesc(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}
