package tui

import (
	"context"
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/data/datatest"
	"github.com/letterbox-dev/letterbox/tui/pages/topics"
)

// bigFake is a cluster of n topics over 10 namespaces.
func bigFake(n int) *datatest.Fake { return bigFakeIn(n, 10) }

// bigFakeIn is a cluster of n topics over ns namespaces, every seventh a DLQ.
func bigFakeIn(n, ns int) *datatest.Fake {
	f := datatest.NewFake()
	f.Rows = nil
	f.NS = nil
	for i := range ns {
		f.NS = append(f.NS, fmt.Sprintf("tenant/ns%d", i))
	}
	for i := range n {
		name := fmt.Sprintf("persistent://tenant/ns%d/topic-%05d", i%ns, i)
		if i%7 == 0 {
			name += "-sub-DLQ"
		}
		t := data.ParseTopic(name)
		f.Rows = append(f.Rows, data.TopicRow{Name: name, Namespace: t.NamespaceName(), Local: t.Local,
			StatsKnown: true, Stats: data.Stats{RateIn: float64(i % 300), Backlog: int64(i * 3), Storage: int64(i) << 10, Subscriptions: 1}})
	}
	f.Classify()
	return f
}

func benchApp(b *testing.B, n int) *App { return benchAppOn(b, bigFake(n)) }

func benchAppOn(b *testing.B, src *datatest.Fake) *App {
	b.Helper()
	app, err := New(context.Background(), Options{Source: src, ThemesDir: b.TempDir(),
		Clock: common.FixedClock{T: datatest.FakeEpoch}, Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	app.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	msg := app.root.Init()()
	app.Update(msg)
	if _, ok := msg.(topics.LoadedMsg); !ok {
		b.Fatalf("load: %v", msg)
	}
	return app
}

// BenchmarkTopicsRender10k is one frame of the topics screen with 10,000 topics at 160×48.
func BenchmarkTopicsRender10k(b *testing.B) {
	app := benchApp(b, 10_000)
	b.ResetTimer()
	for b.Loop() {
		_ = app.View()
	}
}

// BenchmarkTopicsRefresh10k is a live refresh of 10,000 topics: filter, sort, group, render.
func BenchmarkTopicsRefresh10k(b *testing.B) {
	app := benchApp(b, 10_000)
	msg := app.root.Init()()
	b.ResetTimer()
	for b.Loop() {
		app.Update(msg)
		_ = app.View()
	}
}

// BenchmarkTopicsFilterKeystroke100k is one keystroke of the topics screen's filter with
// 100,000 topics in 100 namespaces at 160×48, the filter already holding "topic-0": Update and
// View, typing "1" and taking it back by turns.
func BenchmarkTopicsFilterKeystroke100k(b *testing.B) {
	app := benchAppOn(b, bigFakeIn(100_000, 100))
	app.Update(tea.KeyPressMsg{Code: '/', Text: "/"})
	for _, r := range "topic-0" {
		app.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	keys := []tea.KeyPressMsg{{Code: '1', Text: "1"}, {Code: tea.KeyBackspace}}
	b.ResetTimer()
	i := 0
	for b.Loop() {
		app.Update(keys[i%2])
		_ = app.View()
		i++
	}
}

// BenchmarkTopicsRender100k is one frame of the topics screen with 100,000 topics in 100
// namespaces at 160×48.
func BenchmarkTopicsRender100k(b *testing.B) {
	app := benchAppOn(b, bigFakeIn(100_000, 100))
	b.ResetTimer()
	for b.Loop() {
		_ = app.View()
	}
}
