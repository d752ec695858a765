package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// A letter is data from a stranger. One whose key, a property (name and value) and payload
// hold escape sequences (a window title, a screen clear) and a NUL must not act on the
// terminal of whoever looks at it: the text outputs write those bytes visibly; --json stays
// exact. Other letters are unaffected.

const (
	hostileKey     = "k\x1b]0;owned\x07\x1b[2J\x00"
	hostileReason  = "boom\x1b[31m\x00red"
	hostilePayload = "p\x1b[2J\x00payload"
)

// hostileLetter is a dead letter of orders whose key, reason, a property and payload hold
// control characters.
func hostileLetter(int) *client.Message {
	return &client.Message{Key: hostileKey, Payload: []byte(hostilePayload),
		Properties: map[string]string{client.PropertyRealTopic: dlqNS + "orders", "reason": hostileReason,
			"x\x1bname": "v\x1b[5m"}}
}

// rawControl returns the first control byte of s a terminal would act on (anything below a
// space but a newline, and DEL), or -1.
func rawControl(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n') || c == 0x7f {
			return i
		}
	}
	return -1
}

func checkNoRawControl(t *testing.T, what, out string) {
	t.Helper()
	if i := rawControl(out); i >= 0 {
		t.Errorf("%s: raw control byte %#x at %d in %q", what, out[i], i, out)
	}
}

func TestHostileLettersPrintedVisibly(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // resend records its run
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, 90*time.Second)
	dlq, sub := dlqNS+"orders-billing-DLQ", "billing-keep"
	if err := env.Admin.CreateTopic(ctx, dlqNS+"orders", 0, nil); err != nil {
		t.Fatal(err)
	}
	ids := fillDLQ(t, ctx, env, dlq, sub, 2, func(i int) *client.Message {
		if i == 0 {
			return hostileLetter(i)
		}
		return orderLetter(i, "timeout")
	})
	hostile := positionOf(ids[0])

	code, out, errOut := runAct(t, ctx, env, "", false, "stats", "orders-billing-DLQ")
	if code != ExitOK {
		t.Fatalf("stats: %d %s", code, errOut)
	}
	checkNoRawControl(t, "stats stdout", out)
	checkNoRawControl(t, "stats stderr", errOut)
	for _, want := range []string{`boom\x1b[31m\x00red`, `k\x1b]0;owned\x07\x1b[2J\x00`, "timeout", "k1"} {
		if !strings.Contains(out, want) {
			t.Errorf("stats: %q missing from %q", want, out)
		}
	}

	code, out, errOut = runAct(t, ctx, env, "", false, "stats", "orders-billing-DLQ", "--json")
	if code != ExitOK {
		t.Fatalf("stats --json: %d %s", code, errOut)
	}
	var st struct {
		ByReason []struct{ Name string } `json:"by_reason"`
		TopKeys  []struct{ Name string } `json:"top_keys"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("stats --json: %v in %q", err, out)
	}
	if !hasName(st.ByReason, hostileReason) || !hasName(st.TopKeys, hostileKey) {
		t.Errorf("stats --json: the exact reason and key missing from %q", out)
	}

	code, out, errOut = runAct(t, ctx, env, "", false, "discard", "orders-billing-DLQ", "--ids", hostile, "--dry-run")
	if code != ExitOK {
		t.Fatalf("discard --dry-run: %d %s", code, errOut)
	}
	checkNoRawControl(t, "discard --dry-run stdout", out)
	checkNoRawControl(t, "discard --dry-run stderr", errOut)
	if want := "would discard " + hostile + `  key k\x1b]0;owned\x07\x1b[2J\x00  reason boom\x1b[31m\x00red`; !strings.Contains(out, want) {
		t.Errorf("discard --dry-run: %q missing from %q", want, out)
	}

	code, out, errOut = runAct(t, ctx, env, "", false, "resend", "orders-billing-DLQ", "--id", hostile, "--yes")
	if code != ExitOK {
		t.Fatalf("resend: %d %s", code, errOut)
	}
	checkNoRawControl(t, "resend stdout", out)
	checkNoRawControl(t, "resend preview", errOut)
	for _, want := range []string{`key         k\x1b]0;owned\x07\x1b[2J\x00`, `reason=boom\x1b[31m\x00red`,
		`x\x1bname=v\x1b[5m`, `payload     13 bytes: p\x1b[2J\x00payload`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("resend preview: %q missing from %q", want, errOut)
		}
	}
}

// A DLQ named by no rule, found by its newest letter, whose REAL_TOPIC names a topic with
// control characters: dlq ls writes the origin visibly.
func TestHostileOriginListedVisibly(t *testing.T) {
	t.Parallel()
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, 60*time.Second)
	fillDLQ(t, ctx, env, dlqNS+"payments.deadletter", "keep", 1, func(int) *client.Message {
		return &client.Message{Payload: []byte("x"), Properties: map[string]string{client.PropertyRealTopic: dlqNS + "pay\x1b[2Jments"}}
	})
	code, out, errOut := runAct(t, ctx, env, "", false, "ls", "public/default")
	if code != ExitOK {
		t.Fatalf("ls: %d %s", code, errOut)
	}
	checkNoRawControl(t, "ls stdout", out)
	checkNoRawControl(t, "ls stderr", errOut)
	if !strings.Contains(out, `pay\x1b[2Jments`) {
		t.Errorf("ls: the origin missing from %q", out)
	}
}

func hasName(cs []struct{ Name string }, name string) bool {
	for _, c := range cs {
		if c.Name == name {
			return true
		}
	}
	return false
}
