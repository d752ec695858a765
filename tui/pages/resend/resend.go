// Package resend is the edit-and-resend screen: one dead letter's destination (its origin, or
// any topic), key, properties and payload in a form — the payload also in $VISUAL or $EDITOR —
// sent again after a confirmation through the replay engine, so that the letter is
// acknowledged in the DLQ only once the new message is receipted (a crash between the two
// leaves the letter where it was: a duplicate at worst, never a loss). The sent message carries
// REPLAYED_FROM and REPLAY_COUNT as a replay's do; the resend is recorded in the history.
package resend

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/components/input"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// Stage is where the resend is.
type Stage int

const (
	Editing Stage = iota
	Confirming
	Sending
	Sent
	Failed
)

// SentMsg ends a resend.
type SentMsg struct {
	common.Fresh
	Summary data.ReplaySummary
	Err     error
}

// EditedMsg carries the payload back from the editor.
type EditedMsg struct {
	Payload []byte
	Err     error
}

const (
	fieldTo = iota
	fieldKey
	fieldProps
	fieldPayload
	fields
)

// Page is the resend screen.
type Page struct {
	c       *common.Common
	dlq     string
	sub     string
	letter  data.DeadLetter
	to      input.Model
	key     input.Model
	props   textarea.Model
	payload textarea.Model
	focus   int
	stage   Stage
	problem string
	sum     data.ReplaySummary
	w, h    int
	// quoted says which fields are edited quoted (quoted.go).
	quoted [fields]bool
}

// New returns the screen for letter of dlq, read through sub.
func New(c *common.Common, dlq, sub string, letter data.DeadLetter) *Page {
	p := &Page{c: c, dlq: dlq, sub: sub, letter: letter}
	p.to = input.New(c, "", "a topic")
	if letter.Origin != "" {
		p.setText(fieldTo, naming.ShortName(letter.Origin, ""), false)
	}
	p.key = input.New(c, "", "no key")
	p.setText(fieldKey, letter.Key, false)
	p.props = input.NewArea(c, "name=value, one a line")
	var props string
	props, p.quoted[fieldProps] = propertyLines(letter.Properties)
	p.props.SetValue(props)
	p.payload = input.NewArea(c, "the payload")
	p.setText(fieldPayload, string(letter.Payload), true)
	p.setFocus(fieldPayload)
	return p
}

func (p *Page) setFocus(f int) {
	p.focus = f
	p.to.Blur()
	p.key.Blur()
	p.props.Blur()
	p.payload.Blur()
	switch f {
	case fieldTo:
		p.to.Focus()
	case fieldKey:
		p.key.Focus()
	case fieldProps:
		_ = p.props.Focus()
	case fieldPayload:
		_ = p.payload.Focus()
	}
}

func (p *Page) Init() tea.Cmd { return nil }
func (p *Page) Title() string { return "resend " + p.letter.ID }

// Capturing: every key types into the form while it is edited, and the answer is awaited
// while confirming.
func (p *Page) Capturing() bool { return p.stage == Editing || p.stage == Confirming }
func (p *Page) Busy() bool      { return p.stage == Sending }
func (p *Page) Close()          {}

// Stage is where the resend is (tests).
func (p *Page) Stage() Stage { return p.stage }

func (p *Page) SetSize(w, h int) {
	p.w, p.h = w, h
	fw := max(10, w-14)
	p.to.SetWidth(fw)
	p.key.SetWidth(fw)
	p.props.SetWidth(max(10, w-2))
	p.props.SetHeight(min(5, max(2, h/6)))
	p.payload.SetWidth(max(10, w-2))
	p.payload.SetHeight(max(3, h-12-p.props.Height()))
}

var (
	keySend = key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "send…"))
	keyEdit = key.NewBinding(key.WithKeys("ctrl+e"), key.WithHelp("ctrl+e", "payload in $EDITOR"))
	keyYes  = key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "yes, send it"))
	keyNo   = key.NewBinding(key.WithKeys("n", "esc"), key.WithHelp("n/esc", "no"))
)

func (p *Page) Update(msg tea.Msg) (common.Page, tea.Cmd) {
	switch msg := msg.(type) {
	case EditedMsg:
		if msg.Err != nil {
			return p, status("editor: " + msg.Err.Error())
		}
		edited := string(msg.Payload)
		if !strings.HasSuffix(p.payload.Value(), "\n") {
			edited = strings.TrimSuffix(edited, "\n") // the newline editors add at the end
		}
		if p.quoted[fieldPayload] {
			p.payload.SetValue(edited) // edited quoted, as the form showed it
		} else {
			p.setText(fieldPayload, edited, true)
		}
	case SentMsg:
		p.sum = msg.Summary
		switch {
		case msg.Err != nil:
			p.stage, p.problem = Failed, msg.Err.Error()
		case msg.Summary.Moved != 1:
			p.stage, p.problem = Failed, "the letter was not found in the backlog of "+p.sub+" (acknowledged since?): nothing sent"
			if msg.Summary.Failed > 0 {
				p.problem = "the letter could not be sent; it stays in the DLQ"
			}
		default:
			p.stage = Sent
			dlq := data.ParseTopic(p.dlq).String()
			return p, tea.Batch(p.record(), func() tea.Msg { return common.ChangedMsg{Topic: dlq} })
		}
		return p, p.record()
	case tea.KeyPressMsg:
		return p, p.keyPress(msg)
	}
	return p, nil
}

func (p *Page) keyPress(msg tea.KeyPressMsg) tea.Cmd {
	k := p.c.Keys
	switch p.stage {
	case Confirming:
		switch {
		case key.Matches(msg, keyYes):
			return p.send()
		case key.Matches(msg, keyNo):
			p.stage = Editing
		}
		return nil
	case Sending:
		return nil
	case Sent, Failed:
		if key.Matches(msg, k.Back) {
			return common.Back
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Back):
		return common.Back
	case key.Matches(msg, k.NextField):
		p.setFocus((p.focus + 1) % fields)
		return nil
	case key.Matches(msg, k.PrevField):
		p.setFocus((p.focus + fields - 1) % fields)
		return nil
	case key.Matches(msg, keySend):
		if refuse := p.c.Refuse("resend"); refuse != nil {
			return refuse
		}
		if _, _, err := p.edit(); err != nil {
			p.problem = err.Error()
			return nil
		}
		p.problem = ""
		p.stage = Confirming
		return nil
	case key.Matches(msg, keyEdit):
		return p.openEditor()
	}
	var cmd tea.Cmd
	switch p.focus {
	case fieldTo:
		p.to, cmd = p.to.Update(msg)
	case fieldKey:
		p.key, cmd = p.key.Update(msg)
	case fieldProps:
		p.props, cmd = p.props.Update(msg)
	case fieldPayload:
		p.payload, cmd = p.payload.Update(msg)
	}
	return cmd
}

// edit is what the form says to send, and where.
func (p *Page) edit() (*data.ReplayEdit, string, error) {
	to, err := p.text(fieldTo, "to", strings.TrimSpace(p.to.Value()))
	if err != nil {
		return nil, "", err
	}
	if to == "" {
		return nil, "", fmt.Errorf("a destination is needed: the letter names no origin")
	}
	props := map[string]string{}
	for i, l := range strings.Split(p.props.Value(), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, "", fmt.Errorf("property line %d: want name=value, not %q", i+1, l)
		}
		what := fmt.Sprintf("property line %d", i+1)
		if k, err = p.text(fieldProps, what, strings.TrimSpace(k)); err != nil {
			return nil, "", err
		}
		if v, err = p.text(fieldProps, what, v); err != nil {
			return nil, "", err
		}
		props[k] = v
	}
	key, err := p.text(fieldKey, "key", p.key.Value())
	if err != nil {
		return nil, "", err
	}
	payload, err := p.text(fieldPayload, "payload", p.payload.Value())
	if err != nil {
		return nil, "", err
	}
	return &data.ReplayEdit{Payload: []byte(payload), Key: key, Properties: props}, data.ParseTopic(to).String(), nil
}

// send resends the letter through the replay engine: its id alone selected, the edit in place
// of its content; the engine acknowledges it only once the new message is receipted.
func (p *Page) send() tea.Cmd {
	ds, ok := p.c.Source.(data.DeadLetterSource)
	if !ok {
		p.stage, p.problem = Failed, "this cluster connection cannot resend"
		return nil
	}
	ed, to, err := p.edit()
	if err != nil {
		p.stage, p.problem = Editing, err.Error()
		return nil
	}
	p.stage = Sending
	// The destination, in another tenant or not, is the one the form shows and the user sends to.
	req := dlqops.Resend(p.letter.ID, to, ed)
	req.DLQ, req.Subscription = p.dlq, p.sub
	ctx := p.c.Ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		events := make(chan data.ReplayEvent, 16)
		drained := make(chan struct{})
		go func() { // the engine blocks on its events until they are received
			defer close(drained)
			for range events {
			}
		}()
		sum, err := ds.Replay(ctx, req, events)
		<-drained
		return SentMsg{Summary: sum, Err: err}
	}
}

// record adds the resend to the history.
func (p *Page) record() tea.Cmd {
	ds, ok := p.c.Source.(data.DeadLetterSource)
	if !ok {
		return nil
	}
	ed, to, _ := p.edit()
	sel := "id " + p.letter.ID
	if ed != nil && ed.Changes(dlqops.StartEdit(p.letter.Payload, p.letter.Key, p.letter.Properties)) {
		sel += " edited" // as letterbox dlq resend says: only when the form changed the letter
	}
	e := dlqops.ResendEntry(data.ParseTopic(p.dlq).String(), p.sub, sel+" → "+naming.ShortName(to, ""), p.sum, "complete")
	e.When, e.By = p.c.Clock.Now().UTC(), "tui"
	if p.stage == Failed {
		e.Result = "error: " + p.problem
	}
	return func() tea.Msg {
		if err := ds.RecordReplay(e); err != nil {
			return common.ErrorMsg{What: "resend history", Err: err}
		}
		return nil
	}
}

// openEditor edits the payload in $VISUAL, else $EDITOR; the TUI gives the terminal to it
// until it exits.
func (p *Page) openEditor() tea.Cmd {
	getenv := p.c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	editor := getenv("VISUAL")
	if editor == "" {
		editor = getenv("EDITOR")
	}
	if editor == "" {
		return status("neither $VISUAL nor $EDITOR is set: edit the payload here")
	}
	f, err := os.CreateTemp("", "letterbox-resend-*.txt")
	if err != nil {
		return status("editor: " + err.Error())
	}
	name := f.Name()
	_, err = f.WriteString(p.payload.Value())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return status("editor: " + err.Error())
	}
	// The editor may come with arguments ("code --wait"): run it through the shell, as git does.
	cmd := exec.Command("sh", "-c", editor+` "$1"`, "sh", name)
	return tea.Exec(settledExec{cmd}, func(err error) tea.Msg {
		defer os.Remove(name)
		if err != nil {
			return EditedMsg{Err: err}
		}
		b, err := os.ReadFile(name)
		return EditedMsg{Payload: b, Err: err}
	})
}

// settledExec runs the editor for tea.Exec once the TUI's renderer has let go. Bubble Tea
// (v2.1.1) signals its renderer goroutine to stop the frame ticker and goes on at once; on one
// CPU that goroutine could run only after a quick editor had returned and the ticker had been
// restarted, and stopped the new one: the screen stayed blank for good. A short sleep lets it
// run first.
type settledExec struct{ *exec.Cmd }

func (c settledExec) Run() error {
	time.Sleep(5 * time.Millisecond)
	return c.Cmd.Run()
}

// The editor gets the terminal's input and output, as tea.ExecProcess gives them.
func (c settledExec) SetStdin(r io.Reader) {
	if c.Stdin == nil {
		c.Stdin = r
	}
}

func (c settledExec) SetStdout(w io.Writer) {
	if c.Stdout == nil {
		c.Stdout = w
	}
}

func (c settledExec) SetStderr(w io.Writer) {
	if c.Stderr == nil {
		c.Stderr = w
	}
}

func status(s string) tea.Cmd { return func() tea.Msg { return common.StatusMsg(s) } }
