package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
)

// TestTUIReadsCreateNothing drives `letterbox demo` in tmux: a tail by short name opens the
// demo's topic and creates no other, a topic that does not exist says so and esc returns.
func TestTUIReadsCreateNothing(t *testing.T) {
	tm, _ := demoInTmux(t, "keep")
	screen := tm.waitFor("the topics screen", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "● connected") && strings.Contains(s, "orders-billing-DLQ")
	})
	adminURL := regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+`).FindString(screen)
	if adminURL == "" {
		t.Fatalf("no admin URL in the header:\n%s", screen)
	}
	before := namespaceTopics(t, adminURL, "public/default")

	tm.keys(":")
	tm.literal("tail orders")
	tm.keys("Enter")
	tm.waitFor("the tail of the demo's orders", 15*time.Second, func(s string) bool {
		return strings.Contains(s, "Tail public/demo/orders · non-durable reader")
	})
	if after := namespaceTopics(t, adminURL, "public/default"); !slices.Equal(before, after) {
		t.Errorf(":tail orders changed public/default's topics: %v, then %v", before, after)
	}
	tm.keys("Escape") // and wait: a key sent right after Escape would read as alt+key
	tm.waitFor("the topics screen again", 10*time.Second, onTopics)

	tm.keys(":")
	tm.literal("topic does/not/exist")
	tm.keys("Enter")
	tm.waitFor("not found", 10*time.Second, func(s string) bool { return strings.Contains(s, "not found") })
	tm.keys("Escape")
	tm.waitFor("the topics screen again", 10*time.Second, onTopics)
	if after := namespaceTopics(t, adminURL, "public/default"); !slices.Equal(before, after) {
		t.Errorf("reading changed public/default's topics: %v, then %v", before, after)
	}
}

// TestTUITailAcrossBrokerKill tails a topic of a separate `letterbox broker`, kills the broker:
// the tail says so; starts it again on the same addresses and data: the tail reads on (and
// ctrl+r starts it again).
func TestTUITailAcrossBrokerKill(t *testing.T) {
	bin, dir := buildForTmux(t)
	data := filepath.Join(dir, "data")
	br, su, au := startBrokerProcess(t, bin, data, "127.0.0.1:0", "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	produce := func(payload string) {
		t.Helper()
		cl, err := client.New(client.Options{ServiceURL: su, OperationTimeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: "restart", DisableBatching: true})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if _, err := p.Send(ctx, &client.Message{Key: payload, Payload: []byte(payload)}); err != nil {
			t.Fatal(err)
		}
	}
	produce("before")

	tm := letterboxInTmux(t, "tail", bin, dir, nil, "--service-url", su, "--admin-url", au)
	tm.waitFor("the topics screen", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "● connected") && strings.Contains(s, "restart")
	})
	tm.keys(":")
	tm.literal("tail restart")
	tm.keys("Enter")
	tm.waitFor("the tail", 15*time.Second, func(s string) bool { return strings.Contains(s, "● following") })
	produce("one")
	tm.waitFor("a message tailed", 15*time.Second, func(s string) bool { return strings.Contains(s, "key         one") })

	if err := br.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	br.Wait()
	tm.waitFor("the tail saying its broker is gone", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "connection lost: the broker is unreachable") && strings.Contains(s, "unreachable · retrying")
	})

	startBrokerProcess(t, bin, data, strings.TrimPrefix(su, "pulsar://"), strings.TrimPrefix(au, "http://"))
	tm.waitFor("the tail connected again", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "● following") && strings.Contains(s, "● connected")
	})
	tm.keys("C-r") // starts it again: it follows from now on
	produce("two")
	tm.waitFor("a message tailed after the restart", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "key         two")
	})
}

// onTopics: the topics screen is on top (no breadcrumb after it).
func onTopics(s string) bool {
	return strings.HasPrefix(s, "letterbox Topics ") && !strings.Contains(strings.SplitN(s, "\n", 2)[0], "›")
}

// buildForTmux builds the binary into a directory of the test's, where its tmux session keeps
// its socket and HOME too. It skips with -short, and without tmux except in CI.
func buildForTmux(t *testing.T) (bin, dir string) {
	t.Helper()
	if testing.Short() {
		t.Skip("end to end: not with -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tmux is not installed (%v), and CI is set: the end-to-end tests of the real binary cannot run; install tmux (.ci/run does)", err)
		}
		t.Skip("tmux is not installed")
	}
	t.Parallel()
	dir = t.TempDir()
	bin = filepath.Join(dir, "letterbox")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/letterbox-dev/letterbox").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin, dir
}

// letterboxInTmux runs bin with args at 160×48 in a tmux session of its own, HOME and the XDG
// directories under dir (env adds to the environment, NAME=VALUE).
func letterboxInTmux(t *testing.T, session, bin, dir string, env []string, args ...string) *tmux {
	t.Helper()
	home := filepath.Join(dir, "home")
	tm := &tmux{t: t, sock: filepath.Join(dir, "tmux.sock"), target: session}
	t.Cleanup(func() { exec.Command("tmux", "-S", tm.sock, "kill-server").Run() })
	script := fmt.Sprintf("%s %s; echo \"letterbox exited $?\"; sleep 60", bin, strings.Join(args, " "))
	cmd := []string{"-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "160", "-y", "48",
		"env", "-u", "NO_COLOR", "-u", "TMUX", "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"XDG_DATA_HOME=" + filepath.Join(home, "data"), "XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"TERM=xterm-256color", "COLORTERM="}
	cmd = append(cmd, env...)
	tm.run(append(cmd, "sh", "-c", script)...)
	return tm
}

// startBrokerProcess runs `letterbox broker` on data and the given addresses, killed when the
// test ends, and returns it with its service and admin URLs.
func startBrokerProcess(t *testing.T, bin, data, listen, http string) (*exec.Cmd, string, string) {
	t.Helper()
	br := exec.Command(bin, "broker", "--data", data, "--listen", listen, "--http", http)
	stdout, err := br.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := br.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { br.Process.Kill(); br.Wait() })
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		ready <- line
	}()
	select {
	case line := <-ready:
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "ready" {
			t.Fatalf("broker said %q", line)
		}
		return br, f[1], f[2]
	case <-time.After(30 * time.Second):
		t.Fatal("the broker did not say it was ready in 30s")
	}
	return nil, "", ""
}

// namespaceTopics lists a namespace's persistent topics through the admin API.
func namespaceTopics(t *testing.T, adminURL, ns string) []string {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(adminURL + "/admin/v2/persistent/" + ns)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []string
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("topics of %s: %v", ns, err)
	}
	slices.Sort(out)
	return out
}

// TestDemoListsContexts: `letterbox demo` offers config.toml's contexts to :context (it said
// "no contexts" with a file full of them).
func TestDemoListsContexts(t *testing.T) {
	bin, dir := buildForTmux(t)
	conf := filepath.Join(dir, "home", "config", "letterbox", "config.toml")
	if err := os.MkdirAll(filepath.Dir(conf), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte(`[[context]]
name = "staging"
service_url = "pulsar://127.0.0.1:1"
admin_url = "http://127.0.0.1:1"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	tm := letterboxInTmux(t, "ctx", bin, dir, nil, "demo")
	tm.waitFor("the demo's topics", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "● connected") && strings.Contains(s, "orders-billing-DLQ")
	})
	tm.keys(":")
	tm.literal("context")
	tm.keys("Enter")
	tm.waitFor("the contexts", 10*time.Second, func(s string) bool { return strings.Contains(s, "contexts: staging") })
}
