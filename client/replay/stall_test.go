package replay

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// A pause longer than IdleTimeout in the middle of the dead letters does not end the run as
// complete: the broker still has some for it, so it waits.
func TestPauseIsNotTheEnd(t *testing.T) {
	t.Parallel()
	const n = 2 * sendWindow
	e := newFilledEnv(t, n)
	// The consumer's second FLOW (sent once it has taken half of its first sendWindow) waits 1.5 s
	// in the broker, and the connection with it: the run has started and has dead letters
	// to work on, then none come for a while.
	var flows atomic.Int32
	e.b.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		if dir == broker.Inbound && cmd.GetType() == pb.BaseCommand_FLOW && flows.Add(1) == 2 {
			return broker.Verdict{Delay: 1500 * time.Millisecond}
		}
		return broker.Verdict{}
	})
	sum, err := Run(brokertest.Ctx(t, 30*time.Second), e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state,
		IdleTimeout: 300 * time.Millisecond})
	if err != nil || !sum.OK() || sum.Moved != n {
		t.Fatalf("summary %+v, %v; want all %d moved and complete", sum, err, n)
	}
	if flows.Load() < 2 {
		t.Fatal("no FLOW was delayed")
	}
	if b := e.backlog(t, dlq, dsub); b != 0 {
		t.Errorf("DLQ backlog %d after the replay, want 0", b)
	}
}

// When the dead letters stop coming, the run ends after StallTimeout with an error and is not
// complete; the next run resumes and moves the rest.
func TestStallEndsRunIncomplete(t *testing.T) {
	t.Parallel()
	const n = 2 * sendWindow
	e := newFilledEnv(t, n)
	// Only the consumer's first FLOW (its first window) reaches the broker.
	var flows atomic.Int32
	e.b.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		return broker.Verdict{Drop: dir == broker.Inbound && cmd.GetType() == pb.BaseCommand_FLOW && flows.Add(1) > 1}
	})
	opts := Options{DLQ: dlq, Subscription: dsub, StateDir: e.state, IdleTimeout: 200 * time.Millisecond, StallTimeout: time.Second}
	sum, err := Run(brokertest.Ctx(t, 30*time.Second), e.cl, opts)
	first := sum.Moved // what the first FLOW let through
	if err == nil || first == 0 || first >= n || !strings.Contains(err.Error(), fmt.Sprintf("%d more entries", n-first)) || sum.Complete {
		t.Fatalf("summary %+v, %v; want some moved, an error about the rest that did not come, not complete", sum, err)
	}
	e.b.Intercept(nil)
	sum, err = Run(brokertest.Ctx(t, 30*time.Second), e.cl, opts)
	if err != nil || !sum.OK() || sum.Moved != n-first || !sum.Resumed {
		t.Fatalf("second run: summary %+v, %v; want the run resumed and the other %d moved", sum, err, n-first)
	}
	if b := e.backlog(t, dlq, dsub); b != 0 {
		t.Errorf("DLQ backlog %d after the second run, want 0", b)
	}
}

// Acknowledgements lost with a connection: after the reconnect the broker redelivers what
// moved but was never acknowledged, and the run acknowledges it again rather than leaving it
// in the DLQ.
func TestLostAcksAreSentAgain(t *testing.T) {
	t.Parallel()
	const n = 2000
	e := newFilledEnv(t, n)
	// ACKs are dropped until 300 message ids are lost; the next command from the client
	// then closes its connection, and from there on everything goes through.
	var lost atomic.Int32
	var cut atomic.Bool
	e.b.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		if dir != broker.Inbound || cut.Load() {
			return broker.Verdict{}
		}
		if lost.Load() >= 300 {
			cut.Store(true)
			return broker.Verdict{Disconnect: true}
		}
		if cmd.GetType() == pb.BaseCommand_ACK {
			lost.Add(int32(len(cmd.GetAck().GetMessageId())))
			return broker.Verdict{Drop: true}
		}
		return broker.Verdict{}
	})
	sum, err := Run(brokertest.Ctx(t, 60*time.Second), e.cl, Options{DLQ: dlq, Subscription: dsub, StateDir: e.state})
	if err != nil || !sum.OK() {
		t.Fatalf("summary %+v, %v; want complete", sum, err)
	}
	if !cut.Load() {
		t.Fatal("the connection was never cut")
	}
	if b := e.backlog(t, dlq, dsub); b != 0 {
		t.Errorf("DLQ backlog %d after the replay, want 0 (acknowledgements lost with the connection)", b)
	}
}

// newFilledEnv is a broker whose DLQ holds n dead letters of origin, its subscription first.
func newFilledEnv(t *testing.T, n int) *env {
	t.Helper()
	e := newEnv(t, false)
	e.fillDLQ(t, dlq, dsub, n, func(i int) *client.Message { return deadLetter(origin, i, nil) })
	return e
}
