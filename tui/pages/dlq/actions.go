package dlq

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// The actions on a DLQ: discard (the replay screen, which previews and confirms), purge or skip
// the head of the backlog, resend one letter edited (the resend screen), and the repairs of a
// DLQ that loses letters: a subscription, or the namespace's retention. Each asks first; a
// purge of everything, or anything past TypeToConfirm letters, asks to type the DLQ's name.
// Read-only turns them all off (common.Common.ReadOnly), and every one is recorded in the
// history.

var (
	keyDiscard   = key.NewBinding(key.WithKeys("X"), key.WithHelp("X", "discard…"))
	keyPurge     = key.NewBinding(key.WithKeys("P"), key.WithHelp("P", "purge…"))
	keyResend    = key.NewBinding(key.WithKeys("E"), key.WithHelp("E", "edit & resend…"))
	keySubscribe = key.NewBinding(key.WithKeys("A"), key.WithHelp("A", "add subscription…"))
	keyRetention = key.NewBinding(key.WithKeys("T"), key.WithHelp("T", "set retention…"))
)

// TypeToConfirm is how many letters an action may take before its confirmation asks for the
// DLQ's name rather than y.
const TypeToConfirm = 100

// confirmation is a question on the prompt line: want is what must be typed ("y", or the DLQ's
// name); do acts once it is.
type confirmation struct {
	question string
	want     string
	do       func() tea.Cmd
}

// ActedMsg reports an action done from this screen (purge, skip, subscription, retention).
type ActedMsg struct {
	common.Fresh
	Topic  string
	Status string
}

// shortName is what a user types to confirm: the DLQ's local name.
func (p *Page) shortName() string { return data.ParseTopic(p.topic).Local }

// ask puts a confirmation on the prompt line.
func (p *Page) ask(c confirmation) {
	p.confirm = &c
	p.openPrompt(promptConfirm)
}

// discard opens the discard's preview on the selection: the marked letters, else the search.
// Everything is a purge (P), which asks for the DLQ's name. A read-only session sees the
// preview; the replay screen refuses the discard itself.
func (p *Page) discard() tea.Cmd {
	if refuse := p.notLetters("discard"); refuse != nil {
		return refuse
	}
	req, ok := p.selection()
	if !ok {
		return status("no subscription: letters are discarded by acknowledging them on one (A adds one)")
	}
	if len(req.IDs) == 0 && len(req.Filters) == 0 {
		return status("select letters to discard first: mark them (space) or search (/); P purges the whole backlog")
	}
	req.Discard = true
	return common.Navigate(common.NavigateMsg{Page: common.PageReplay, Topic: p.topic, Sub: p.sub, Extra: req})
}

// purge asks how much of the backlog's head to drop, then for the confirmation.
func (p *Page) purge() tea.Cmd {
	if refuse := p.c.Refuse("purge"); refuse != nil {
		return refuse
	}
	if refuse := p.notLetters("purge"); refuse != nil {
		return refuse
	}
	if p.sub == "" {
		return status("no subscription: nothing to purge")
	}
	p.openPrompt(promptPurge)
	return nil
}

// purgeCount takes the number typed after P (empty: everything) and asks to confirm.
func (p *Page) purgeCount(v string) tea.Cmd {
	backlog := p.backlog()
	n := int64(0)
	if v != "" {
		var err error
		if n, err = strconv.ParseInt(v, 10, 64); err != nil || n <= 0 {
			return status(fmt.Sprintf("purge: want a number of letters (empty: the whole backlog), not %q", v))
		}
	}
	// Only a count of letters says that n takes them all; entries say nothing of it.
	all := n == 0 || (!backlog.EntriesOnly && n >= backlog.N)
	q := fmt.Sprintf("Skip the first %s of %s's backlog (%s)? %s acknowledged one by one, batch members "+
		"included, gone for any replay.", data.Letters(n), p.sub, backlog.Words(), common.Agree(int(n), "It is", "They are"))
	want := "y"
	if all {
		q = fmt.Sprintf("Purge the whole backlog of %s (%s)? Every letter is acknowledged, gone for any replay.", p.sub, backlog.Words())
		n = 0
	}
	if all || n > TypeToConfirm {
		want = p.shortName()
	}
	topic, sub := p.topic, p.sub
	action, sel := dlqops.ActionSkip, fmt.Sprintf("first %d", n)
	if n == 0 {
		action, sel = dlqops.ActionPurge, "everything"
	}
	p.ask(confirmation{question: q, want: want, do: func() tea.Cmd {
		return p.act(action, sel, func(ctx context.Context, ds data.DeadLetterSource) (string, int64, error) {
			went, err := ds.Purge(ctx, topic, sub, n)
			switch {
			case err != nil:
				return "", went, err
			case n == 0 && went >= 0:
				return fmt.Sprintf("purged the backlog of %s: %s", sub, data.Backlog{N: went}.Words()), went, nil
			case n == 0:
				return "purged the backlog of " + sub, went, nil
			}
			return fmt.Sprintf("skipped the first %s of %s", data.Letters(went), sub), went, nil
		})
	}})
	return nil
}

// subscribe proposes a subscription on the DLQ at its earliest retained letter, named after
// the origin's subscription.
func (p *Page) subscribe() tea.Cmd {
	if refuse := p.c.Refuse("adding a subscription"); refuse != nil {
		return refuse
	}
	if refuse := p.notLetters("adding a subscription"); refuse != nil {
		return refuse
	}
	p.openPrompt(promptSubscribe)
	p.in.SetValue(dlqops.ReplaySubscriptionName(p.originSub))
	return nil
}

func (p *Page) subscribeName(name string) tea.Cmd {
	if name == "" {
		return status("no subscription name: nothing created")
	}
	for _, s := range p.detail.Subscriptions {
		if s.Name == name {
			return status("the DLQ already has a subscription " + name)
		}
	}
	topic := p.topic
	p.ask(confirmation{question: fmt.Sprintf("Create subscription %s on %s at its earliest retained letter? From then on it keeps every dead letter until acknowledged.",
		name, naming.ShortName(topic, "")), want: "y", do: func() tea.Cmd {
		return p.act(dlqops.ActionSubscribe, name, func(ctx context.Context, ds data.DeadLetterSource) (string, int64, error) {
			if err := ds.CreateSubscription(ctx, topic, name); err != nil {
				return "", 0, err
			}
			return "created subscription " + name + " at the earliest retained letter", 0, nil
		})
	}})
	return nil
}

// setRetention proposes a retention policy for the DLQ's namespace.
func (p *Page) setRetention() tea.Cmd {
	if refuse := p.c.Refuse("setting retention"); refuse != nil {
		return refuse
	}
	p.openPrompt(promptRetention)
	p.in.SetValue("7d 1GB")
	return nil
}

func (p *Page) retentionValue(v string) tea.Cmd {
	r, err := parseRetention(v)
	if err != nil {
		return status("retention: " + err.Error())
	}
	ns := data.ParseTopic(p.topic).NamespaceName()
	what := retentionText(r)
	p.ask(confirmation{question: fmt.Sprintf("Set the retention of namespace %s to %s? It applies to every topic of %s.", ns, what, ns),
		want: "y", do: func() tea.Cmd {
			return p.act(dlqops.ActionRetention, what, func(ctx context.Context, ds data.DeadLetterSource) (string, int64, error) {
				if err := ds.SetRetention(ctx, ns, r); err != nil {
					return "", 0, err
				}
				return "retention of " + ns + " set to " + what, 0, nil
			})
		}})
	return nil
}

// parseRetention reads "7d 1GB", "24h 500MB", "-1 -1" (unlimited) or "0 0" (none).
func parseRetention(v string) (data.Retention, error) {
	f := strings.Fields(v)
	if len(f) != 2 {
		return data.Retention{}, fmt.Errorf("want a time and a size, such as 7d 1GB (-1: unlimited), not %q", v)
	}
	var r data.Retention
	switch {
	case f[0] == "-1":
		r.Minutes = -1
	default:
		d, err := parseDays(f[0])
		if err != nil {
			return r, fmt.Errorf("time %q: want 7d, 24h or 90m (-1: unlimited)", f[0])
		}
		r.Minutes = int64(d / time.Minute)
	}
	size := strings.ToUpper(f[1])
	switch {
	case size == "-1":
		r.SizeMB = -1
	case strings.HasSuffix(size, "GB"):
		n, err := strconv.ParseInt(strings.TrimSuffix(size, "GB"), 10, 64)
		if err != nil || n < 0 {
			return r, fmt.Errorf("size %q: want 1GB or 500MB (-1: unlimited)", f[1])
		}
		r.SizeMB = n * 1024
	default:
		n, err := strconv.ParseInt(strings.TrimSuffix(size, "MB"), 10, 64)
		if err != nil || n < 0 {
			return r, fmt.Errorf("size %q: want 1GB or 500MB (-1: unlimited)", f[1])
		}
		r.SizeMB = n
	}
	return r, nil
}

func parseDays(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		return time.Duration(n) * 24 * time.Hour, err
	}
	return time.ParseDuration(s)
}

func retentionText(r data.Retention) string {
	t := "unlimited time"
	switch m := r.Minutes; {
	case m >= 1440 && m%1440 == 0:
		t = common.Plural(int(m/1440), "day")
	case m >= 60 && m%60 == 0:
		t = common.Plural(int(m/60), "hour")
	case m >= 0:
		t = common.Plural(int(m), "minute")
	}
	s := "unlimited size"
	if r.SizeMB >= 0 {
		s = fmt.Sprintf("%d MB", r.SizeMB)
	}
	return t + ", " + s
}

// resend opens the resend screen on the letter under the cursor.
func (p *Page) resend() tea.Cmd {
	if refuse := p.c.Refuse("resend"); refuse != nil {
		return refuse
	}
	if refuse := p.notLetters("resend"); refuse != nil {
		return refuse
	}
	d := p.current()
	if d == nil {
		return nil
	}
	if d.Unreadable != "" {
		return status(unreadableNote)
	}
	if p.sub == "" {
		return status("no subscription: a resent letter is acknowledged on one (A adds one)")
	}
	return common.Navigate(common.NavigateMsg{Page: common.PageResend, Topic: p.topic, Sub: p.sub, Extra: *d})
}

// act runs an admin action, records it in the history and reports it; an error (a refused
// permission among them) says what was refused and leaves the screen as it was.
// fn says what it did and how many letters went (for the history; -1: not known).
func (p *Page) act(action, selection string, fn func(context.Context, data.DeadLetterSource) (string, int64, error)) tea.Cmd {
	ds, ok := p.c.Source.(data.DeadLetterSource)
	if !ok {
		return status("this cluster connection cannot act on dead letters")
	}
	topic, sub, started := p.topic, p.sub, p.c.Clock.Now()
	return common.Load(p.c, action, func(ctx context.Context, _ data.Source) (ActedMsg, error) {
		said, went, err := fn(ctx, ds)
		if action == dlqops.ActionSubscribe {
			sub = selection // the subscription it creates
		}
		e := data.HistoryEntry{When: started.UTC(), Action: action, DLQ: data.ParseTopic(topic).String(), Subscription: sub,
			Selection: selection, Discarded: max(went, 0), Result: "complete", Elapsed: time.Since(started), By: "tui"}
		if err != nil {
			e.Result = "error: " + err.Error()
		}
		if herr := ds.RecordReplay(e); herr != nil && err == nil {
			said += " (not recorded in the history: " + herr.Error() + ")"
		}
		if err != nil {
			return ActedMsg{}, fmt.Errorf("%s refused: %w", action, err)
		}
		return ActedMsg{Topic: topic, Status: said}, nil
	}, func(m ActedMsg) tea.Msg { return m })
}

// backlog is the backlog of the subscription the screen reads through: letters where the
// broker counts them, else its entries, marked so.
func (p *Page) backlog() data.Backlog {
	if p.detail == nil {
		return data.Backlog{}
	}
	for _, s := range p.detail.Subscriptions {
		if s.Name == p.sub {
			return s.BacklogOf()
		}
	}
	return data.Backlog{}
}

// notLetters refuses an action on a topic the DLQ rule does not call a dead-letter or retry
// topic, as the command line does: an application's own subscription is not letterbox's to
// change by a key (letterbox dlq … --not-a-dlq does it from a shell, said explicitly).
func (p *Page) notLetters(what string) tea.Cmd {
	if p.detail == nil || !p.detail.VerdictKnown || p.detail.Verdict.Kind != data.KindTopic {
		return nil
	}
	return status(fmt.Sprintf("%s: %s is not a dead-letter or retry topic by the DLQ rule (letterbox dlq … --not-a-dlq acts on it from a shell)",
		what, naming.ShortName(p.topic, "")))
}
