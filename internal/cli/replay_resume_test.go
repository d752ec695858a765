package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// TestReplayResumeSaysSoPerCluster: starting an interrupted replay again names the run it
// resumes; the same DLQ reached as another cluster (another admin URL) is another replay.
func TestReplayResumeSaysSoPerCluster(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	env := brokertest.Start(t)
	ctx := brokertest.Ctx(t, time.Minute)
	subscribeOrigin(t, ctx, env)
	const dlq, sub = dlqNS + "orders-billing-DLQ", "billing-keep"
	fillDLQ(t, ctx, env, dlq, sub, 20, func(i int) *client.Message { return orderLetter(i, "declined") })

	// Interrupted: one letter a second, cancelled as soon as the first has moved.
	runCtx, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		brokertest.WaitFor(t, 30*time.Second, "a letter moved", func() bool { return originBacklog(t, ctx, env) >= 1 })
	}()
	code, _, errOut := runTyped(t, runCtx, env, "", false, "replay", "--dlq", dlq, "--rate", "1")
	if code != ExitFailure || !strings.Contains(errOut, "interrupted") {
		t.Fatalf("interrupted run: code %d, stderr %q", code, errOut)
	}
	resuming := regexp.MustCompile(`letterbox replay: resuming run letterbox-replay-\S+ of \d\d:\d\d: [1-9]\d* already moved`)

	// A dry run names the run the replay would resume, and resumes nothing.
	code, _, errOut = runTyped(t, ctx, env, "", false, "replay", "--dlq", dlq, "--dry-run")
	if code != ExitOK || !regexp.MustCompile(`without --dry-run, would resume run letterbox-replay-\S+ of \d\d:\d\d: [1-9]\d* already moved`).MatchString(errOut) {
		t.Errorf("dry run: code %d, stderr %q", code, errOut)
	}

	// The same broker by another admin URL is another cluster to the history and to the runs:
	// that replay starts afresh (and moves the rest).
	var out, errBuf strings.Builder
	other := strings.Replace(env.AdminURL, "127.0.0.1", "localhost", 1)
	code = RunProcess(ctx, Process{}, []string{"replay", "--dlq", dlq, "--service-url", env.ServiceURL, "--admin-url", other},
		&out, &errBuf)
	if code != ExitOK || resuming.MatchString(errBuf.String()) {
		t.Errorf("another cluster's replay: code %d, stderr %q, stdout %q", code, errBuf.String(), out.String())
	}
	// This cluster's interrupted run is resumed, and says so.
	code, _, errOut = runTyped(t, ctx, env, "", false, "replay", "--dlq", dlq)
	if code != ExitOK || !resuming.MatchString(errOut) {
		t.Errorf("resumed: code %d, stderr %q", code, errOut)
	}
	if b := backlog(t, ctx, env, dlq, sub); b != 0 {
		t.Errorf("backlog %d after the resumed run", b)
	}
}
