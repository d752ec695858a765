package cli_test

import (
	"context"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
)

// TestTUIFollowsTheCluster drives the real binary in tmux against a `letterbox broker` of its
// own: a typo then a good command leaves no error; a topic deleted under its open screen turns
// it into the not-found page; with the broker stopped, `:flow orders billing` opens a screen
// that waits, and the flow once the broker is back on the same addresses and data.
func TestTUIFollowsTheCluster(t *testing.T) {
	bin, dir := buildForTmux(t)
	data := filepath.Join(dir, "data")
	br, su, au := startBrokerProcess(t, bin, data, "127.0.0.1:0", "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := client.New(client.Options{ServiceURL: su, OperationTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, topic := range []string{"orders", "doomed"} { // each with a subscription billing
		c, err := cl.Subscribe(ctx, client.ConsumerOptions{Topic: topic, SubscriptionName: "billing"})
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	cl.Close()

	tm := letterboxInTmux(t, "follow", bin, dir, nil, "--service-url", su, "--admin-url", au)
	tm.waitFor("the topics screen", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "● connected") && strings.Contains(s, "orders") && strings.Contains(s, "doomed")
	})

	// A typo, then a good command: no error stays.
	tm.keys(":")
	tm.literal("dql")
	tm.keys("Enter")
	tm.waitFor("the typo's error", 5*time.Second, func(s string) bool { return strings.Contains(s, `✗ unknown command "dql"`) })
	tm.keys(":")
	tm.literal("topics")
	tm.keys("Enter")
	tm.waitFor("the error gone after :topics", 5*time.Second, func(s string) bool {
		return onTopics(s) && !strings.Contains(s, "✗")
	})

	// A topic deleted under its open screen: the not-found page, its keys off.
	tm.keys(":")
	tm.literal("topic doomed")
	tm.keys("Enter")
	// An error in its place would leave the status line before the wait ends: stop on it.
	screen := tm.waitFor("the doomed topic", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "public/default/doomed") && strings.Contains(s, "billing") || strings.Contains(s, "✗")
	})
	if strings.Contains(screen, "✗") {
		t.Fatalf(":topic doomed failed:\n%s", screen)
	}
	req, _ := http.NewRequest(http.MethodDelete, au+"/admin/v2/persistent/public/default/doomed?force=true", nil)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("deleting the topic: %s", resp.Status)
	}
	tm.waitFor("the not-found page", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "✗ public/default/doomed: not found") && strings.Contains(s, "ctrl+r try again")
	})
	tm.keys("Escape")
	tm.waitFor("the topics screen again", 10*time.Second, onTopics)

	// The broker stopped: the command waits, and opens once the broker is back.
	if err := br.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	br.Wait()
	tm.waitFor("the broker gone", 20*time.Second, func(s string) bool { return strings.Contains(s, "unreachable · retrying") })
	tm.keys(":")
	tm.literal("flow orders billing")
	tm.keys("Enter")
	tm.waitFor("the command waiting", 20*time.Second, func(s string) bool {
		return strings.Contains(s, ":flow orders billing") && strings.Contains(s, "Waiting for the cluster")
	})
	startBrokerProcess(t, bin, data, strings.TrimPrefix(su, "pulsar://"), strings.TrimPrefix(au, "http://"))
	tm.waitFor("the flow once the broker is back", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "Flow public/default/orders · subscription billing") && !strings.Contains(s, "Waiting for the cluster")
	})
}

// TestTUIDemoQuitAsksOverASecondTUI: `letterbox demo` shows both of its URLs in the header; a
// second letterbox on the demo's broker, tailing a topic, makes q in the demo ask, naming its
// connection and its admin requests, and n keeps the demo running.
func TestTUIDemoQuitAsksOverASecondTUI(t *testing.T) {
	bin, dir := buildForTmux(t)
	demo := letterboxInTmux(t, "demo", bin, dir, nil, "demo")
	screen := demo.waitFor("the demo's topics", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "● connected") && strings.Contains(s, "orders-billing-RETRY")
	})
	urls := regexp.MustCompile(`(pulsar://127\.0\.0\.1:[0-9]+) (http://127\.0\.0\.1:[0-9]+) ● connected`).FindStringSubmatch(screen)
	if urls == nil {
		t.Fatalf("the demo's header does not show both URLs:\n%s", screen)
	}

	// Nobody else yet: q would quit at once, so it is not pressed; a second TUI tails orders.
	second := letterboxInTmux(t, "second", bin, dir, nil, "--service-url", urls[1], "--admin-url", urls[2])
	second.waitFor("the second TUI's topics", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "● connected") && strings.Contains(s, "orders")
	})
	second.keys(":")
	second.literal("tail public/demo/orders")
	second.keys("Enter")
	second.waitFor("the second TUI's tail", 20*time.Second, func(s string) bool { return strings.Contains(s, "● following") })

	demo.keys("q")
	screen = demo.waitFor("the demo asking before it quits", 10*time.Second, func(s string) bool { return strings.Contains(s, "Quit? y yes") })
	flat := strings.Join(strings.Fields(screen), " ")
	if !strings.Contains(flat, "1 binary-protocol connection") || !strings.Contains(flat, "admin client") {
		t.Errorf("the question does not name the second TUI's connection and requests:\n%s", screen)
	}
	demo.keys("n")
	demo.waitFor("the demo still running", 10*time.Second, func(s string) bool {
		return !strings.Contains(s, "Quit? y yes") && strings.Contains(s, "● connected")
	})
}
