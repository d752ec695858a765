package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// TestNothingSelected: a valid filter that selects no letter is said: a property name no
// letter carries is warned about with the names letters do carry, and an action (discard,
// replay, their dry runs) exits 3 and is recorded as "nothing selected", not "complete".
func TestNothingSelected(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	const dlq, sub = dlqNS + "orders-billing-DLQ", "billing-keep"
	subscribeOrigin(t, ctx, env)
	fillDLQ(t, ctx, env, dlq, sub, 6, func(i int) *client.Message {
		m := orderLetter(i, "declined")
		m.Properties["region"] = []string{"eu", "us"}[i%2]
		m.Properties["tenant"] = "acme"
		return m
	})
	const typo = "property.regoin=eu"
	warning := "warning: no letter has property regoin; properties seen: ORIGIN_MESSAGE_ID, REAL_TOPIC, reason, region, tenant"

	code, out, errOut := runTyped(t, ctx, env, "", false, "dlq", "stats", dlq, "--filter", typo)
	if code != ExitOK || !strings.Contains(errOut, warning) || !strings.Contains(out, "selected   0") {
		t.Errorf("stats: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, args := range [][]string{
		{"dlq", "discard", dlq, "--filter", typo, "--yes"},
		{"dlq", "discard", dlq, "--filter", typo, "--dry-run"},
		{"replay", "--dlq", dlq, "--filter", typo},
		{"replay", "--dlq", dlq, "--filter", typo, "--dry-run"},
	} {
		code, out, errOut := runTyped(t, ctx, env, "", false, args...)
		if code != ExitNothing || !strings.Contains(errOut, warning) {
			t.Errorf("%q: code %d, stdout %q, stderr %q; want 3 and the warning", args, code, out, errOut)
		}
	}
	// No property named, nothing to warn about; still nothing selected.
	code, out, errOut = runTyped(t, ctx, env, "", false, "replay", "--dlq", dlq, "--filter", `key=UNKNOWN or key=""`)
	if code != ExitNothing || strings.Contains(errOut, "warning") || !strings.Contains(errOut, "nothing selected: no letter of orders-billing-DLQ on billing-keep is selected") {
		t.Errorf("key=UNKNOWN or key=\"\": code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if b := backlog(t, ctx, env, dlq, sub); b != 6 {
		t.Fatalf("backlog %d, want 6", b)
	}
	var results []string
	for _, h := range history(t) {
		results = append(results, fmt.Sprintf("%s %s: %s", h.Action, h.Selection, h.Result))
	}
	want := []string{
		"discard " + typo + ": " + dlqops.ResultNothingSelected,
		"replay " + typo + ": " + dlqops.ResultNothingSelected,
		`replay key=UNKNOWN or key="": ` + dlqops.ResultNothingSelected,
	}
	if fmt.Sprint(results) != fmt.Sprint(want) {
		t.Errorf("history\n%q\nwant\n%q", results, want)
	}

	// == is =: the letters of region eu are selected, and moved.
	code, out, errOut = runTyped(t, ctx, env, "", false, "replay", "--dlq", dlq, "--filter", "property.region==eu")
	if code != ExitOK || !strings.Contains(out, "moved 3 of 6") || strings.Contains(errOut, "warning") {
		t.Errorf("==: code %d, stdout %q, stderr %q", code, out, errOut)
	}
}
