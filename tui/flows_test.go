package tui

import (
	"bufio"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data/datatest"
)

const orders = "persistent://public/demo/orders"

func TestFlowFilterOpenBack(t *testing.T) {
	h := newHarness(t, 80, 24, "")
	h.keys("/")
	h.typeText("orders")
	h.keys("enter")
	if got := h.app.root.Selected(); got != orders {
		t.Fatalf("after filtering, selected %q, want %q", got, orders)
	}
	if s := h.plain(); strings.Contains(s, "payments") || !strings.Contains(s, "/orders") {
		t.Errorf("filter did not narrow the list:\n%s", s)
	}
	h.keys("enter")
	if _, ok := h.app.active().(interface{ Close() }); !ok || len(h.app.stack) != 2 {
		t.Fatalf("enter did not open the topic (stack %d)", len(h.app.stack))
	}
	s := h.plain()
	for _, want := range []string{"Subscriptions (2)", "billing-a", "AUTO_CONSUME", "JSON", "Schema · JSON · version 2"} {
		if !strings.Contains(s, want) {
			t.Errorf("topic screen lacks %q:\n%s", want, s)
		}
	}
	h.keys("esc")
	if len(h.app.stack) != 1 || !strings.Contains(h.plain(), "/orders") {
		t.Errorf("esc did not go back to the filtered topics")
	}
	h.keys("esc")
	if !strings.Contains(h.plain(), "payments") {
		t.Errorf("esc did not clear the filter")
	}
}

func TestFlowPaletteTheme(t *testing.T) {
	h := newHarness(t, 80, 24, "dark")
	before := h.app.Render()
	h.keys(":")
	h.typeText("theme light")
	h.keys("enter")
	if got := h.app.c.Styles.Theme.Name; got != "light" {
		t.Fatalf("theme = %s, want light", got)
	}
	after := h.app.Render()
	if after == before {
		t.Error("the view did not change colours")
	}
	if !strings.Contains(h.plain(), "theme light") {
		t.Error("no status after :theme")
	}
	h.keys(":")
	h.typeText("theme nope")
	h.keys("enter")
	if !strings.Contains(h.plain(), `no theme "nope"`) || h.app.c.Styles.Theme.Name != "light" {
		t.Errorf("unknown theme not reported:\n%s", h.plain())
	}
}

func TestFlowHelpAndQuit(t *testing.T) {
	h := newHarness(t, 80, 24, "")
	h.keys("?")
	if s := h.plain(); !strings.Contains(s, "Help · Topics") || !strings.Contains(s, "NAVIGATION") {
		t.Fatalf("no help overlay:\n%s", s)
	}
	h.keys("esc")
	if strings.Contains(h.plain(), "Help ·") {
		t.Fatal("esc did not close the help")
	}
	_, cmd := h.app.Update(keyMsg("q"))
	if cmd == nil || !h.app.quitting {
		t.Fatal("q did not quit")
	}
}

// Plain letters type into inputs: q in the produce form is a q, not quit.
func TestFlowProduceTypesLetters(t *testing.T) {
	h := newHarness(t, 80, 24, "")
	h.send(common.NavigateMsg{Page: common.PageProduce, Topic: orders})
	h.typeText("q?:")
	h.keys("tab")
	h.typeText("reason=test")
	h.keys("tab")
	h.typeText("5s")
	h.keys("tab")
	h.typeText(`{"a":1}`)
	if h.app.quitting || h.app.helpOpen || h.app.paletteOpen {
		t.Fatal("a plain letter escaped the input")
	}
	h.keys("ctrl+s")
	if len(h.src.Produced) != 1 {
		t.Fatalf("produced %d messages", len(h.src.Produced))
	}
	got := h.src.Produced[0]
	if got.Key != "q?:" || got.Properties["reason"] != "test" || got.Delay.Seconds() != 5 || string(got.Payload) != `{"a":1}` {
		t.Errorf("produced %+v", got)
	}
	if !strings.Contains(h.plain(), "sent 101:0:-1") {
		t.Errorf("no confirmation:\n%s", h.plain())
	}
}

// The consumers' schema types update on the live refresh.
func TestFlowSchemaTypeLive(t *testing.T) {
	h := newHarness(t, 80, 24, "")
	h.send(common.NavigateMsg{Page: common.PageTopic, Topic: orders})
	h.src.SetSchemaType(orders, "auditor", "AVRO")
	h.send(refreshTickMsg{})
	if s := h.plain(); !strings.Contains(s, "AVRO (changed)") {
		t.Errorf("schema type change not shown:\n%s", s)
	}
}

func TestFlowTailFollow(t *testing.T) {
	h := newHarness(t, 80, 24, "")
	base := h.src.TailMsgs[0]
	for i := range 3 {
		m := base
		m.ID = "12:" + string(rune('a'+i))
		h.src.TailMsgs = append(h.src.TailMsgs, m)
	}
	h.send(common.NavigateMsg{Page: common.PageMessages, Topic: orders})
	if s := h.plain(); !strings.Contains(s, "● following · 4 messages") {
		t.Fatalf("not following:\n%s", s)
	}
	h.keys("k")
	if s := h.plain(); !strings.Contains(s, "paused") {
		t.Errorf("scrolling back did not pause:\n%s", s)
	}
	h.keys("F")
	if s := h.plain(); !strings.Contains(s, "● following") {
		t.Errorf("F did not resume following:\n%s", s)
	}
	h.keys("esc") // closes the page and stops the tail
	if len(h.app.stack) != 1 {
		t.Error("esc did not close the tail")
	}
}

func TestFlowPeekSearchExport(t *testing.T) {
	h := newHarness(t, 80, 24, "")
	h.send(common.NavigateMsg{Page: common.PageMessages, Topic: orders, Sub: "billing"})
	h.keys("/")
	h.typeText("cancelled")
	h.keys("enter")
	if s := h.plain(); !strings.Contains(s, "/cancelled: 1 of 6 shown") || !strings.Contains(s, "key         order-1003") {
		t.Fatalf("the filter did not find the message:\n%s", s)
	}
	// An expression filters too, as it is typed; a mistake is pointed at and keeps the list
	// (of the last expression that parsed, "cancelled and key~order").
	h.keys("/")
	h.typeText(" and key~order(")
	if s := h.plain(); !strings.Contains(s, "↓ bad regular expression") || !strings.Contains(s, "key         order-1003") {
		t.Fatalf("no pointer to the mistake:\n%s", s)
	}
	h.keys("esc") // clears the filter
	if s := h.plain(); strings.Contains(s, "shown") || !strings.Contains(s, "order-1006") {
		t.Fatalf("esc did not clear the filter:\n%s", s)
	}
	h.keys("g", "space", "space", "e", "enter")
	dir := h.app.c.ExportDir
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("export wrote %v", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the export's mode: %v, %v; want 0600, the letters being the cluster's", fi.Mode(), err)
	}
	f, _ := os.Open(files[0])
	defer f.Close()
	var lines []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 || lines[0]["id"] != "12:40:-1" || lines[0]["redeliveryCount"] != nil {
		t.Errorf("exported %v", lines)
	}
	if p, ok := lines[0]["payload"].(map[string]any); !ok || p["currency"] != "EUR" {
		t.Errorf("payload not exported as JSON: %v", lines[0]["payload"])
	}
	if want := "exported 2 messages to " + files[0]; h.app.status.text != want {
		t.Errorf("status %q, want %q", h.app.status.text, want)
	}
	// Never inside the embedded broker's data.
	h.app.c.DataDir = dir
	h.keys("e", "enter")
	if s := h.app.status.text; !strings.Contains(s, "inside the embedded broker's data directory") {
		t.Errorf("an export into the broker's data was not refused: status %q", s)
	}
}

func TestFlowErrorsAndReconnect(t *testing.T) {
	h := newHarness(t, 80, 24, "")
	h.src.Lock()
	h.src.Err = &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	h.src.Unlock()
	h.send(refreshTickMsg{})
	s := h.plain()
	if !strings.Contains(s, "unreachable") || !strings.Contains(s, "connection refused") {
		t.Fatalf("error not shown:\n%s", s)
	}
	if !strings.Contains(s, "orders") {
		t.Error("the last data should stay on screen")
	}
	h.src.Lock()
	h.src.Err = nil
	h.src.Unlock()
	h.send(refreshTickMsg{})
	if s := h.plain(); !strings.Contains(s, "● connected") || !strings.Contains(s, "reconnected") {
		t.Errorf("no recovery:\n%s", s)
	}
}

func TestFlowResizeAndMouse(t *testing.T) {
	h := newHarness(t, 80, 24, "")
	for _, sz := range [][2]int{{100, 30}, {80, 24}, {200, 60}, {60, 15}} {
		h.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		checkSize(t, h.plain(), sz[0], sz[1])
	}
	h.send(tea.WindowSizeMsg{Width: 80, Height: 24})
	before := h.app.root.Selected()
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown, Y: 5})
	h.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown, Y: 5})
	if h.app.root.Selected() == before {
		t.Error("the wheel did not move the cursor")
	}
	h.send(tea.MouseClickMsg{Button: tea.MouseLeft, Y: 4, X: 5}) // header, title, column header, acme/ heading, invoices
	if got := h.app.root.Selected(); got != "persistent://acme/billing/invoices" {
		t.Errorf("click selected %q", got)
	}
}

// The flow, dead letters and replay commands of the palette, bare.
func TestFlowDeadLetterCommands(t *testing.T) {
	h := newHarness(t, 80, 24, "")
	for cmd, want := range map[string]string{"flow": "Flows · 2 found", "dlq": "2 DLQ topics", "replay": "usage: :replay DLQ"} {
		h.keys(":")
		h.typeText(cmd)
		h.keys("enter")
		if s := h.plain(); !strings.Contains(s, want) {
			t.Errorf(":%s does not show %q:\n%s", cmd, want, s)
		}
		h.app.popToRoot()
	}
	h.keys(":")
	h.typeText("ns public/demo")
	h.keys("enter")
	if s := h.plain(); strings.Contains(s, "invoices") || !strings.Contains(s, "orders") {
		t.Errorf(":ns did not narrow to public/demo:\n%s", s)
	}
}

func TestNoColor(t *testing.T) {
	app, err := New(t.Context(), Options{Source: datatest.NewFake(), ThemesDir: t.TempDir(),
		Getenv: func(k string) string {
			if k == "NO_COLOR" {
				return "1"
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	if app.c.Styles.Theme.Name != "no-color" {
		t.Errorf("NO_COLOR set, theme %s", app.c.Styles.Theme.Name)
	}
	if _, err := New(t.Context(), Options{Source: datatest.NewFake(), Theme: "nope", ThemesDir: t.TempDir()}); err == nil {
		t.Error("unknown theme accepted")
	}
}
