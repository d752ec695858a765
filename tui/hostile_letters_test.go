package tui

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/letterbox-dev/letterbox/tui/data"
)

// A letter is data from a stranger: one whose key, reason, another property (name and value),
// payload, producer name and REAL_TOPIC hold escape sequences and a NUL must not act on the
// terminal from any screen that shows it. Each screen is drawn with its styles, the styles
// (SGR sequences) are taken out, and no other control byte may be left: the letter's show as
// text (\x1b).

const hostileDLQ = "persistent://public/demo/orders-billing-DLQ"

// makeHostile turns the fake DLQ's first letter into a stranger's.
func makeHostile(h *harness) {
	h.src.Lock()
	defer h.src.Unlock()
	m := &h.src.Messages[hostileDLQ][0]
	m.Key = "k\x1b]0;owned\x07\x1b[2J\x00"
	m.Properties["REAL_TOPIC"] = "persistent://public/demo/ord\x1b[2Jers"
	m.Properties["reason"] = "boom\x1b[2J\x00"
	m.Properties["x\x1bname"] = "v\x1b[5m\x00"
	m.ProducerName = "evil\x1b[2J-DLQ"
	m.Payload = []byte("p\x1b[2J\x00payload")
}

// styles are the SGR sequences lipgloss draws with; the letter's escapes are not SGR.
var styles = regexp.MustCompile("\x1b\\[[0-9;:]*m")

func checkNoRawControl(t *testing.T, what, view string) {
	t.Helper()
	plain := styles.ReplaceAllString(view, "")
	for i := 0; i < len(plain); i++ {
		if c := plain[i]; (c < 0x20 && c != '\n') || c == 0x7f {
			t.Errorf("%s: raw control byte %#x at %d: %q", what, c, i, plain[max(0, i-40):min(len(plain), i+40)])
			return
		}
	}
}

func TestHostileLetterOnEveryScreen(t *testing.T) {
	for _, sc := range []struct {
		name, line string
		keys       []string
		want       string // what the screen shows of the letter, escaped
	}{
		{name: "dlq", line: "dlq public/demo/orders-billing-DLQ", want: `boom\x1b[2J\x00`},
		{name: "dlq-open", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"enter"}, want: `x\x1bname`},
		{name: "peek", line: "peek public/demo/orders-billing-DLQ billing-replay", want: `k\x1b]0;owned\x07\x1b[2J\x00`},
		{name: "peek-payload", line: "peek public/demo/orders-billing-DLQ billing-replay", keys: []string{"d", "d"}, want: `v\x1b[5m\x00`},
		{name: "flow", line: "flow public/demo/orders billing", want: `boom\x1b[2J\x00`},
		{name: "flow-journey", line: "flow public/demo/orders-billing-DLQ", keys: []string{"j", "j", "j"}, want: `Journey of 12:3:-1 (key k\x1b]0;owned\x07\x1b[2J\x00)`},
		{name: "counts", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"c"}, want: `boom\x1b[2J\x00`},
		{name: "counts-keys", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"c", "G"}, want: ``},
		{name: "search", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"/", "text:reason~boom", "enter"}, want: `boom\x1b[2J\x00`},
		{name: "replay-preview", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"R"}, want: `ord\x1b[2Jers`},
		{name: "replay-done", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"R", "enter", "y"}, want: ``},
		{name: "resend-form", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"E"}, want: `k\x1b]0;owned\x07\x1b[2J\x00`},
		{name: "resend-confirm", line: "dlq public/demo/orders-billing-DLQ", keys: []string{"E", "ctrl+s"}, want: `ord\x1b[2Jers`},
	} {
		for _, sz := range sizes {
			t.Run(fmt.Sprintf("%s-%dx%d", sc.name, sz[0], sz[1]), func(t *testing.T) {
				h := newHarness(t, sz[0], sz[1], "dark")
				makeHostile(h)
				h.command(sc.line)
				h.keys(sc.keys...)
				view := h.app.Render()
				checkNoRawControl(t, sc.name, view)
				if sz[0] == 220 && sc.want != "" && !strings.Contains(styles.ReplaceAllString(view, ""), sc.want) {
					t.Errorf("%s: %q not shown:\n%s", sc.name, sc.want, h.plain())
				}
			})
		}
	}
}

// The resend form sends the letter as it was, whatever it shows: its key, properties and
// payload hold control characters and go back exactly.
func TestHostileLetterResentExactly(t *testing.T) {
	h := newHarness(t, 160, 48, "dark")
	makeHostile(h)
	h.command("dlq public/demo/orders-billing-DLQ")
	h.keys("E", "ctrl+s", "y")
	h.src.Lock()
	defer h.src.Unlock()
	if len(h.src.Resent) != 1 {
		t.Fatalf("resent %d letters:\n%s", len(h.src.Resent), h.plain())
	}
	ed := h.src.Resent[0]
	if ed.Key != "k\x1b]0;owned\x07\x1b[2J\x00" || string(ed.Payload) != "p\x1b[2J\x00payload" ||
		ed.Properties["reason"] != "boom\x1b[2J\x00" || ed.Properties["x\x1bname"] != "v\x1b[5m\x00" {
		t.Errorf("resent %q / %q / %q", ed.Key, ed.Payload, ed.Properties)
	}
}

// A letter the cluster could not hand over shows its reason in its row; the others show as
// usual.
func TestUnreadableLetterKeepsTheOthers(t *testing.T) {
	h := newHarness(t, 160, 48, "dark")
	h.src.Lock()
	msgs := h.src.Messages[hostileDLQ]
	msgs[1] = data.Message{Topic: hostileDLQ, Position: 2,
		Unreadable: `net/http: HTTP/1.x transport connection broken: malformed MIME header line: "X-Pulsar-Partition-Key: k\x1b[2J"`}
	h.src.Unlock()
	h.command("dlq public/demo/orders-billing-DLQ")
	view := h.plain()
	for _, want := range []string{"order-990", "unreadable (position 2): net/http", "order-992", "order-993"} {
		if !strings.Contains(view, want) {
			t.Errorf("%q not shown:\n%s", want, view)
		}
	}
	checkNoRawControl(t, "dlq", h.app.Render())
	h.keys("j", "space")
	if v := h.plain(); !strings.Contains(v, "nothing to act on") {
		t.Errorf("marking the unreadable letter:\n%s", v)
	}
}
