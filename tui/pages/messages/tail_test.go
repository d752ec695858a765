package messages

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/themes"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/data/datatest"
	"github.com/letterbox-dev/letterbox/tui/keymap"
)

func testCommon() *common.Common {
	th, _ := themes.Find(themes.Default, nil)
	return &common.Common{Ctx: context.Background(), Styles: common.NewStyles(th), Keys: keymap.Default(),
		Clock: common.FixedClock{T: datatest.FakeEpoch}, Source: datatest.NewFake(), Timeout: 10 * time.Second}
}

// TestTailRestartIgnoresTheOldReader (defect 9 of issue 31): ctrl+r stops the old reader and
// starts a new one; the old one's end, arriving after, does not end the new tail.
func TestTailRestartIgnoresTheOldReader(t *testing.T) {
	topic := "persistent://public/demo/orders"
	p := New(testCommon(), topic, "")
	old, fresh := make(chan data.TailEvent), make(chan data.TailEvent)
	p.Update(TailStartedMsg{Topic: topic, ch: old, stop: func() {}})
	p.Update(TailLostMsg{Topic: topic, ch: old})
	p.restartTail()
	p.Update(TailStartedMsg{Topic: topic, ch: fresh, stop: func() {}})
	p.Update(TailMsg{Topic: topic, ch: old}) // the old reader's channel closing
	if p.tailDone {
		t.Fatal("the old reader's end ended the new tail")
	}
}

// TestTailEndSaysWhy: why a tail ended, and what ctrl+r will do, for each way it ends.
func TestTailEndSaysWhy(t *testing.T) {
	deleted := &client.BrokerClosedError{Topic: "persistent://public/demo/orders", Reason: "topic persistent://public/demo/orders was deleted"}
	for _, c := range []struct {
		err       error
		gone      bool
		why, then string
	}{
		{deleted, false, "the topic was deleted", "ctrl+r tails it again once it exists"},
		{&client.BrokerClosedError{}, true, "the topic was deleted", "ctrl+r tails it again once it exists"},
		{fmt.Errorf("reading: %w", client.ErrTopicTerminated), false, "the topic was terminated: it takes no new messages", "ctrl+r starts a new tail all the same"},
		{client.ErrAuthorization, false, "permission: the cluster no longer lets this role read it", "ctrl+r tries again with the same role"},
		{fmt.Errorf("dial: %w", client.ErrConnect), false, "the broker is gone", "ctrl+r starts a new tail once it answers"},
		{&client.BrokerClosedError{Reason: "unloaded"}, false, "the broker closed it: unloaded", "ctrl+r starts a new tail from the latest message"},
		{errors.New("boom"), false, "failed: boom", "ctrl+r starts a new tail from the latest message"},
	} {
		why, then := tailEnd(c.err, c.gone)
		if why != c.why || then != c.then {
			t.Errorf("tailEnd(%v, %v) = %q, %q; want %q, %q", c.err, c.gone, why, then, c.why, c.then)
		}
	}
}
