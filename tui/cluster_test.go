//go:build clustertest

package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/clustertest"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
)

// On the three-broker fixture with token authentication, the topics screen shows the stats of
// every topic whichever broker owns it, the same on every refresh; the topic screen opens on
// topics of each broker; a broker that stops answering is named in the status line.
func TestTopicsScreenAcrossTheCluster(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{TokenAuth: true})
	token := c.Token(t, "admin")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := client.New(client.Options{ServiceURL: c.ServiceURL(), Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// Topic own-N of broker i holds a backlog of 101+i on its subscription "audit".
	backlog := map[string]int{}
	for i := range c.Members {
		topic := c.TopicOwnedBy("own", i)
		p, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: topic, InitialSubscriptionName: "audit"})
		if err != nil {
			t.Fatal(err)
		}
		for range 101 + i {
			if _, err := p.Send(ctx, &client.Message{Payload: []byte("x")}); err != nil {
				t.Fatal(err)
			}
		}
		p.Close()
		backlog[topic] = 101 + i
	}

	h, _ := newClusterHarness(t, ctx, data.AdminOptions{AdminURL: c.AdminURL(), ServiceURL: c.ServiceURL(), Token: token}, 160, 48)
	for refresh := range 3 {
		s := h.plain()
		for topic, n := range backlog {
			line := lineWith(s, data.ParseTopic(topic).Local)
			if !strings.Contains(line, fmt.Sprint(n)) || strings.Contains(line, "…") {
				t.Fatalf("refresh %d: %s's row lacks its backlog %d: %q\n%s", refresh, topic, n, line, s)
			}
		}
		h.send(common.RefreshMsg{Forced: true})
	}
	for topic, n := range backlog {
		h.command("topic " + topic)
		if s := h.plain(); !strings.Contains(s, fmt.Sprintf("backlog %d ", n)) {
			t.Fatalf("the topic screen of %s (broker %d) lacks its backlog %d:\n%s", topic, c.OwnerIndex(topic), n, s)
		}
		h.app.popToRoot()
	}

	silent := c.Members[1]
	silent.StopWeb()
	h.send(common.RefreshMsg{Forced: true})
	s := h.plain()
	if want := "broker " + strings.TrimPrefix(silent.WebURL, "http://") + " did not answer"; !strings.Contains(s, want) {
		t.Fatalf("the status line does not say %q:\n%s", want, s)
	}
	topic := c.TopicOwnedBy("own", 1)
	if line := lineWith(s, data.ParseTopic(topic).Local); !strings.Contains(line, fmt.Sprint(backlog[topic])) {
		t.Fatalf("the silent broker's topic lost its last stats: %q", line)
	}
}

// lineWith returns the first line of s that contains sub.
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
