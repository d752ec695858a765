package tui

import (
	"context"
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/data/datatest"
	"github.com/letterbox-dev/letterbox/tui/pages/flow"
)

// BenchmarkFlowRender is one frame of the flow screen at 160×48 with a full reading: 100
// peeked dead letters and retry letters over 16 RECONSUMETIMES values.
func BenchmarkFlowRender(b *testing.B) {
	src := datatest.NewFake()
	dlq, retry := "persistent://public/demo/orders-billing-DLQ", "persistent://public/demo/orders-billing-RETRY"
	var dead, rl []data.Message
	for i := range data.FlowPeek {
		props := map[string]string{"RECONSUMETIMES": fmt.Sprint(1 + i%16), "REAL_TOPIC": "persistent://public/demo/orders",
			"ORIGIN_MESSAGE_ID": fmt.Sprintf("12:%d:-1", i), "reason": fmt.Sprintf("reason %d", i%7)}
		m := data.Message{ID: fmt.Sprintf("7:%d:-1", i), Key: fmt.Sprintf("order-%d", i), Properties: props,
			PublishTime: datatest.FakeEpoch.Add(-time.Duration(i) * time.Minute), Payload: []byte(`{"id":1}`)}
		dead = append(dead, m)
		m.ID = fmt.Sprintf("9:%d:-1", i)
		rl = append(rl, m)
	}
	src.Messages[dlq], src.Messages[retry] = dead, rl
	app, err := New(context.Background(), Options{Source: src, ThemesDir: b.TempDir(),
		Clock: common.FixedClock{T: datatest.FakeEpoch}, Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	app.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	p := flow.New(app.c, "persistent://public/demo/orders", "billing")
	app.stack = append(app.stack, p)
	app.resize()
	app.Update(p.Init()())
	if p.Flow() == nil || p.Flow().DLQPeeked != data.FlowPeek {
		b.Fatal("no flow reading")
	}
	b.ResetTimer()
	for b.Loop() {
		_ = app.View()
	}
}
