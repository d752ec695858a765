//go:build clustertest

package clustertest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/internal/clustertest"
)

// The fixture, seen by the official Go client and plain HTTP: it must behave as an upstream
// cluster before the tests of our client and TUI can rely on it.

// lookups counts the LOOKUP answers the broker sends, by kind.
type lookups struct {
	mu                         sync.Mutex
	redirect, connect, proxied int
	closeProducer, closeCons   int
}

func (l *lookups) watch(b *broker.Broker) {
	b.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		if dir != broker.Outbound {
			return broker.Verdict{}
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		switch cmd.GetType() {
		case pb.BaseCommand_LOOKUP_RESPONSE:
			r := cmd.GetLookupTopicResponse()
			switch {
			case r.GetResponse() == pb.CommandLookupTopicResponse_Redirect:
				l.redirect++
			case r.GetProxyThroughServiceUrl():
				l.proxied++
			case r.GetResponse() == pb.CommandLookupTopicResponse_Connect:
				l.connect++
			}
		case pb.BaseCommand_CLOSE_PRODUCER:
			l.closeProducer++
		case pb.BaseCommand_CLOSE_CONSUMER:
			l.closeCons++
		}
		return broker.Verdict{}
	})
}

func (l *lookups) get() lookups {
	l.mu.Lock()
	defer l.mu.Unlock()
	return lookups{redirect: l.redirect, connect: l.connect, proxied: l.proxied, closeProducer: l.closeProducer, closeCons: l.closeCons}
}

func officialClient(t *testing.T, url string) pulsar.Client {
	t.Helper()
	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: url, OperationTimeout: 10 * time.Second, ConnectionTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// roundTrip produces n messages to topic and receives them, in order.
func roundTrip(t *testing.T, c pulsar.Client, topic string, n int) {
	t.Helper()
	ctx := brokertest.Ctx(t, 30*time.Second)
	cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s", SubscriptionInitialPosition: pulsar.SubscriptionPositionEarliest})
	if err != nil {
		t.Fatalf("subscribe %s: %v", topic, err)
	}
	defer cons.Close()
	prod, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic})
	if err != nil {
		t.Fatalf("producer %s: %v", topic, err)
	}
	defer prod.Close()
	for i := range n {
		if _, err := prod.Send(ctx, &pulsar.ProducerMessage{Payload: []byte(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(m.Payload()) != fmt.Sprint(i) {
			t.Fatalf("message %d: got %q", i, m.Payload())
		}
		cons.Ack(m)
	}
}

func TestLookupAtNonOwnerRedirects(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{})
	var l lookups
	l.watch(c.Broker)
	cl := officialClient(t, c.Members[0].ServiceURL)
	topic := c.TopicOwnedBy("redirected", 2)
	roundTrip(t, cl, topic, 10)
	if got := l.get(); got.redirect == 0 || got.connect == 0 {
		t.Fatalf("lookups: %d redirects, %d connects; want both", got.redirect, got.connect)
	}
}

func TestPartitionsSpreadOverTheBrokers(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{})
	topic := "persistent://public/default/spread"
	if err := c.Broker.CreatePartitionedTopic(topic, 6, nil); err != nil {
		t.Fatal(err)
	}
	owners := map[int]bool{}
	for i := range 6 {
		owners[c.OwnerIndex(fmt.Sprintf("%s-partition-%d", topic, i))] = true
	}
	if len(owners) != 3 {
		t.Fatalf("6 partitions owned by %d brokers, want 3", len(owners))
	}
	cl := officialClient(t, c.Members[1].ServiceURL)
	ctx := brokertest.Ctx(t, 30*time.Second)
	cons, err := cl.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	prod, err := cl.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for i := range 60 {
		if _, err := prod.Send(ctx, &pulsar.ProducerMessage{Key: fmt.Sprint(i), Payload: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for range 60 {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		seen[m.Topic()] = true
	}
	if len(seen) != 6 {
		t.Fatalf("messages came from %d partitions, want 6", len(seen))
	}
}

func TestProxyAnswersConnectThroughItself(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{Proxy: true})
	var l lookups
	l.watch(c.Broker)
	cl := officialClient(t, c.ServiceURL())
	for i := range 3 {
		roundTrip(t, cl, c.TopicOwnedBy("proxied", i), 5)
	}
	if got := l.get(); got.proxied < 3 || got.redirect != 0 {
		t.Fatalf("lookups: %d through the proxy, %d redirects; want 3+ and none", got.proxied, got.redirect)
	}
}

func TestAdminRedirectsTopicCallsToTheOwner(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{})
	topic := c.TopicOwnedBy("admin", 1)
	if err := c.Broker.CreateTopic(topic, nil); err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	path := "/admin/v2/" + strings.Replace(topic, "://", "/", 1) + "/stats"
	resp, err := noFollow.Get(c.Members[0].WebURL + path + "?getPreciseBacklog=true")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := c.Members[1].WebURL + path + "?getPreciseBacklog=true"; resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != want {
		t.Fatalf("%d to %q; want 307 to %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	resp, err = noFollow.Get(c.Members[1].WebURL + path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the owner answered %d", resp.StatusCode)
	}

	// Each broker's broker-stats/topics holds its own topics only.
	other := c.TopicOwnedBy("admin", 2)
	if err := c.Broker.CreateTopic(other, nil); err != nil {
		t.Fatal(err)
	}
	for i, m := range c.Members {
		got := brokerStatsTopics(t, m.WebURL)
		if got[topic] != (i == 1) || got[other] != (i == 2) {
			t.Fatalf("broker %d lists %v", i, got)
		}
	}
}

func brokerStatsTopics(t *testing.T, webURL string) map[string]bool {
	t.Helper()
	resp, err := http.Get(webURL + "/admin/v2/broker-stats/topics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var all map[string]map[string]map[string]map[string]json.RawMessage
	if err := json.Unmarshal(body, &all); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	out := map[string]bool{}
	for _, bundles := range all {
		for _, domains := range bundles {
			for _, topics := range domains {
				for topic := range topics {
					out[topic] = true
				}
			}
		}
	}
	return out
}

// The official client with an http:// service URL looks topics up over HTTP: each member
// answers with the owner's URLs, so topics of every broker are produced and consumed.
func TestHTTPLookupNamesTheOwner(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{})
	cl := officialClient(t, c.AdminURL())
	for i := range c.Members {
		roundTrip(t, cl, c.TopicOwnedBy("http-lookup", i), 3)
	}
	resp, err := http.Get(c.Members[0].WebURL + "/lookup/v2/topic/persistent/public/default/" +
		strings.TrimPrefix(c.TopicOwnedBy("http-lookup", 2), "persistent://public/default/"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		BrokerURL string `json:"brokerUrl"`
		HTTPURL   string `json:"httpUrl"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.BrokerURL != c.Members[2].ServiceURL || got.HTTPURL != c.Members[2].WebURL {
		t.Fatalf("lookup at broker 0 answered %+v, want broker 2's URLs", got)
	}
}

// With token authentication a call without a token is refused at the broker it reached, as
// upstream authenticates before it redirects; with one it is redirected.
func TestAdminAuthenticatesBeforeRedirecting(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{TokenAuth: true})
	topic := c.TopicOwnedBy("auth", 1)
	if err := c.Broker.CreateTopic(topic, nil); err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	url := c.Members[0].WebURL + "/admin/v2/" + strings.Replace(topic, "://", "/", 1) + "/stats"
	for _, tc := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {c.Token(t, "admin"), http.StatusTemporaryRedirect}} {
		req, _ := http.NewRequest("GET", url, nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Fatalf("token %v: %d, want %d", tc.token != "", resp.StatusCode, tc.want)
		}
	}
}
