package client_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/internal/testwait"
)

// server is a broker the tests connect to: pulsartest's, or the broker package's own where a
// test reaches into it (an interceptor, its stats, its Go API).
type server interface{ ServiceURL() string }

func newClient(t testing.TB, b server, mods ...func(*client.Options)) *client.Client {
	t.Helper()
	o := client.Options{
		ServiceURL:       b.ServiceURL(),
		OperationTimeout: 10 * time.Second,
		Logger:           brokertest.PrefixLogger(t, "client: "),
	}
	for _, m := range mods {
		m(&o)
	}
	c, err := client.New(o)
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func newOfficial(t testing.TB, b server) pulsar.Client {
	t.Helper()
	c, err := pulsar.NewClient(pulsar.ClientOptions{
		URL:               b.ServiceURL(),
		OperationTimeout:  10 * time.Second,
		ConnectionTimeout: 5 * time.Second,
		Logger:            plog.NewLoggerWithSlog(brokertest.PrefixLogger(t, "official: ")),
	})
	if err != nil {
		t.Fatalf("official client: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

var topicSeq struct {
	sync.Mutex
	n int
}

func uniqueTopic(t testing.TB) string {
	topicSeq.Lock()
	defer topicSeq.Unlock()
	topicSeq.n++
	name := strings.NewReplacer("/", "-", " ", "-", "#", "-").Replace(t.Name())
	return fmt.Sprintf("persistent://public/default/%s-%d", strings.ToLower(name), topicSeq.n)
}

func mustProducer(t testing.TB, c *client.Client, o client.ProducerOptions) *client.Producer {
	t.Helper()
	p, err := c.CreateProducer(brokertest.Ctx(t, 10*time.Second), o)
	if err != nil {
		t.Fatalf("create producer on %s: %v", o.Topic, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func mustSubscribe(t testing.TB, c *client.Client, o client.ConsumerOptions) *client.Consumer {
	t.Helper()
	cons, err := c.Subscribe(brokertest.Ctx(t, 10*time.Second), o)
	if err != nil {
		t.Fatalf("subscribe %s: %v", o.SubscriptionName, err)
	}
	t.Cleanup(func() { cons.Close() })
	return cons
}

func receiveN(t testing.TB, cons *client.Consumer, n int, d time.Duration) []*client.Message {
	t.Helper()
	ctx := brokertest.Ctx(t, d)
	out := make([]*client.Message, 0, n)
	for len(out) < n {
		m, err := cons.Receive(ctx)
		if err != nil {
			t.Fatalf("receive %d of %d: %v", len(out)+1, n, err)
		}
		out = append(out, m)
	}
	return out
}

// goroutineLeakCheck fails the test if, after cleanup, goroutines from this package are
// still running (polled, since closed connections finish asynchronously).
func goroutineLeakCheck(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		testwait.ForNil(t, 5*time.Second, "goroutines of package client end", func() error {
			if stacks := clientGoroutines(); len(stacks) > 0 {
				return fmt.Errorf("%d still running:\n%s", len(stacks), strings.Join(stacks, "\n\n"))
			}
			return nil
		})
	})
}

func clientGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "letterbox/client.") && !strings.Contains(g, "client_test.") && !strings.Contains(g, "testing.tRunner") {
			out = append(out, g)
		}
	}
	return out
}
