package admin_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

func TestExpireMessages(t *testing.T) {
	t.Parallel()
	b, c := start(t)
	x := ctx(t)
	const topic = "persistent://public/default/expire-one"
	must(t, c.CreateTopic(x, topic, 0, nil))
	must(t, c.CreateSubscription(x, topic, "s1", adminapi.Earliest))
	must(t, c.CreateSubscription(x, topic, "s2", adminapi.Earliest))
	produce(t, b, topic, "a", "b")
	// "Older than 0 s" may not yet hold within the millisecond of publishing: expire until it does.
	brokertest.WaitFor(t, 10*time.Second, "s1 emptied", func() bool {
		must(t, c.ExpireMessages(x, topic, "s1", 0))
		st, err := c.Stats(x, topic)
		must(t, err)
		return st.Subscriptions["s1"].MsgBacklog == 0
	})
	if st, err := c.Stats(x, topic); err != nil || st.Subscriptions["s2"].MsgBacklog != 2 {
		t.Errorf("the other subscription: %+v, %v; want its backlog of 2 untouched", st.Subscriptions["s2"], err)
	}
	wantStatus(t, "missing subscription", c.ExpireMessages(x, topic, "none", 0), http.StatusNotFound)
}

func TestResetCursorToID(t *testing.T) {
	t.Parallel()
	b, c := start(t)
	x := ctx(t)
	const topic = "persistent://public/default/rewound"
	must(t, c.CreateTopic(x, topic, 0, nil))
	must(t, c.CreateSubscription(x, topic, "s", adminapi.Earliest))
	produce(t, b, topic, "a", "b", "c")
	second, err := c.ExamineMessage(x, topic, false, 2)
	must(t, err)
	must(t, c.ClearBacklog(x, topic, "s"))
	must(t, c.ResetCursorToID(x, topic, "s", second[0].ID))
	msgs, err := c.PeekAt(x, topic, "s", 1)
	must(t, err)
	if len(msgs) != 1 || string(msgs[0].Payload) != "b" {
		t.Errorf("next after reset = %+v, want b", msgs)
	}
	wantStatus(t, "missing subscription", c.ResetCursorToID(x, topic, "none", second[0].ID), http.StatusNotFound)
}
