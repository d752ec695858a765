package tui

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// TestConsumersPerPartition (defect 16 of issue 31): on a partitioned topic a consumer is one
// per partition it reads; the topic screen lists each with its partition, where it listed
// ledger-0 three times with nothing to tell them apart.
func TestConsumersPerPartition(t *testing.T) {
	env := pulsartest.Start(t)
	ctx := brokertest.Ctx(t, 60*time.Second)
	const topic = "persistent://public/default/payments"
	if err := env.Admin().CreateTopic(ctx, topic, 3, nil); err != nil {
		t.Fatal(err)
	}
	cl := brokertest.NewClient(t, env.ServiceURL())
	for _, name := range []string{"ledger-0", "ledger-1"} {
		c, err := cl.Subscribe(ctx, client.ConsumerOptions{Topic: topic, SubscriptionName: "ledger", Name: name, Type: client.KeyShared})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	h, _ := newClusterHarness(t, ctx, data.AdminOptions{AdminURL: env.AdminURL(), ServiceURL: env.ServiceURL()}, 160, 48)
	h.command("topic public/default/payments")
	got := h.plain()
	if !regexp.MustCompile(`CONSUMER +SUBSCRIPTION +PARTITION`).MatchString(got) {
		t.Fatalf("no partition column:\n%s", got)
	}
	for _, name := range []string{"ledger-0", "ledger-1"} {
		for _, part := range []string{"0", "1", "2"} {
			if !regexp.MustCompile(`\n` + name + ` +ledger +` + part + ` `).MatchString(got) {
				t.Errorf("%s on partition %s is not listed:\n%s", name, part, got)
			}
		}
	}
	if n := strings.Count(got, "\nledger-0 "); n != 3 {
		t.Errorf("ledger-0 listed %d times, want once per partition:\n%s", n, got)
	}
}
