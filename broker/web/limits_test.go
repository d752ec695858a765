package web_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/web"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// limitsServer starts a server whose broker configuration edit adjusts.
func limitsServer(t *testing.T, edit func(*broker.Config)) *web.Server {
	t.Helper()
	cfg := broker.DefaultConfig()
	cfg.Logger = quiet
	edit(&cfg)
	return newServer(t, broker.WithConfig(cfg))
}

// stall opens a connection that sends head and then nothing more.
func stall(t *testing.T, addr, head string) net.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	if _, err := io.WriteString(nc, head); err != nil {
		t.Fatal(err)
	}
	return nc
}

// closedWith reads what the server sends on nc until it closes the connection, within a bound
// the test sets so as not to hang, and returns the status line ("" if none came).
func closedWith(t *testing.T, nc net.Conn) string {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(60 * time.Second))
	all, err := io.ReadAll(nc)
	if err != nil {
		t.Fatalf("the server kept a stalled connection open: %v", err)
	}
	line, _, _ := strings.Cut(string(all), "\r\n")
	return line
}

const stalledBody = "PUT /admin/v2/tenants/stalled%d HTTP/1.1\r\nHost: broker\r\nContent-Type: application/json\r\n" +
	"Content-Length: 1048576\r\n\r\n0123456789"

// 500 requests that announce a megabyte and send ten bytes, and 100 whose header never ends,
// used to be held open for good. The read timeouts close them all (the first answered 408),
// and the admin API answers other clients meanwhile.
func TestStalledRequestsClosed(t *testing.T) {
	t.Parallel()
	s := limitsServer(t, func(c *broker.Config) {
		c.HTTPReadHeaderTimeout = 2 * time.Second
		c.HTTPReadTimeout = 2 * time.Second
	})
	var bodies, headers []net.Conn
	for i := range 500 {
		bodies = append(bodies, stall(t, s.Addr(), fmt.Sprintf(stalledBody, i)))
	}
	for i := range 100 {
		headers = append(headers, stall(t, s.Addr(), fmt.Sprintf("GET /admin/v2/tenants/%d HTTP/1.1\r\nHost: br", i)))
	}
	for range 3 {
		if resp, body := do(t, http.MethodGet, s.URL()+"/admin/v2/clusters"); resp.StatusCode != http.StatusOK {
			t.Fatalf("clusters while 600 requests stall: %d %s", resp.StatusCode, body)
		}
	}
	for _, nc := range bodies {
		if line := closedWith(t, nc); !strings.Contains(line, " 408 ") {
			t.Fatalf("a stalled body was answered %q, want 408 Request Timeout", line)
		}
	}
	for _, nc := range headers {
		closedWith(t, nc)
	}
	if resp, body := do(t, http.MethodGet, s.URL()+"/admin/v2/clusters"); resp.StatusCode != http.StatusOK {
		t.Fatalf("clusters afterwards: %d %s", resp.StatusCode, body)
	}
}

// httpMaxRequestSize bounds a body (413, the limit named); unset, the limit is 5 MiB.
func TestRequestBodyLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		limit int64
		size  int
		want  string
	}{
		{limit: 1024, size: 2048, want: "Request body larger than 1024 bytes"},
		{limit: -1, size: 5<<20 + 1, want: "Request body larger than 5242880 bytes"},
	} {
		s := limitsServer(t, func(c *broker.Config) { c.HTTPMaxRequestSize = tc.limit })
		req, err := http.NewRequest(http.MethodPut, s.URL()+"/admin/v2/tenants/big", strings.NewReader(strings.Repeat(" ", tc.size)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), tc.want) {
			t.Errorf("limit %d, body of %d: %d %s, want 413 %q", tc.limit, tc.size, resp.StatusCode, body, tc.want)
		}
	}
}

// maxConcurrentHttpRequests: with two slots and ten stalled requests, the stalled ones are
// answered (408 once they have a slot and their body times out, or 503 when no slot came in
// time) and closed, and the server answers again afterwards: a full house of slow clients
// delays others, it does not wedge the listener.
func TestConcurrentRequestCap(t *testing.T) {
	t.Parallel()
	s := limitsServer(t, func(c *broker.Config) {
		c.MaxConcurrentHTTPRequests = 2
		c.HTTPReadTimeout = time.Second
	})
	var stalled []net.Conn
	for i := range 10 {
		stalled = append(stalled, stall(t, s.Addr(), fmt.Sprintf(stalledBody, i)))
	}
	for _, nc := range stalled {
		if line := closedWith(t, nc); !strings.Contains(line, " 408 ") && !strings.Contains(line, " 503 ") {
			t.Fatalf("a stalled request was answered %q, want 408 or 503", line)
		}
	}
	if resp, body := do(t, http.MethodGet, s.URL()+"/admin/v2/clusters"); resp.StatusCode != http.StatusOK {
		t.Fatalf("clusters afterwards: %d %s", resp.StatusCode, body)
	}
}

// maxHttpServerConnections: at the limit the listener accepts no more, so a request waits
// unanswered until a connection closes, and is served then.
func TestServerConnectionLimit(t *testing.T) {
	t.Parallel()
	s := limitsServer(t, func(c *broker.Config) { c.MaxHTTPServerConnections = 2 })
	idle := []net.Conn{stall(t, s.Addr(), ""), stall(t, s.Addr(), "")}

	waiting := stall(t, s.Addr(), "GET /admin/v2/clusters HTTP/1.1\r\nHost: broker\r\n\r\n")
	var once sync.Once
	got := make(chan string, 1)
	go func() {
		line, err := bufio.NewReader(waiting).ReadString('\n')
		if err != nil {
			line = err.Error()
		}
		once.Do(func() { got <- line })
	}()
	select {
	case line := <-got:
		t.Fatalf("answered %q with two connections open and a limit of two", line)
	case <-time.After(300 * time.Millisecond):
		// Not answered: the listener waits for a slot. (Nothing could answer it sooner, however
		// slow the machine: this bounds only how long the test looks.)
	}
	idle[0].Close()
	waiting.SetReadDeadline(time.Now().Add(60 * time.Second))
	if line := <-got; !strings.Contains(line, " 200 ") {
		t.Fatalf("the waiting request got %q once a connection closed, want 200", line)
	}
}

// A client that asks for a large answer and never reads it held its request slot for good
// (until TCP gave up on it, minutes later). The write timeout cuts the answer off and frees
// the slot: with one slot, a later request is served once the unread answer's time is up.
func TestUnreadAnswerFreesItsSlot(t *testing.T) {
	t.Parallel()
	b, s := startServer(t, broker.WithConfig(func() broker.Config {
		c := broker.DefaultConfig()
		c.Logger = quiet
		c.MaxMessageSize = 24 << 20
		c.MaxConcurrentHTTPRequests = 1
		c.HTTPReadTimeout = 2 * time.Second
		c.HTTPWriteTimeout = 3 * time.Second
		return c
	}()))
	const topic = "persistent://public/default/unread"
	if err := b.CreateTopic(topic, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.CreateSubscription(topic, "s", adminapi.MessageID{LedgerID: -1, EntryID: -1, PartitionIndex: -1}); err != nil {
		t.Fatal(err)
	}
	c, err := pulsar.NewClient(pulsar.ClientOptions{URL: b.ServiceURL(), OperationTimeout: 30 * time.Second, Logger: plog.NewLoggerWithSlog(quiet)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic, DisableBatching: true, CompressionType: pulsar.NoCompression})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Far more than the kernel's socket buffers hold: the server's write blocks.
	if _, err := p.Send(ctx, &pulsar.ProducerMessage{Payload: make([]byte, 20<<20)}); err != nil {
		t.Fatal(err)
	}
	p.Close()

	nc, err := net.DialTimeout("tcp", s.Addr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.(*net.TCPConn).SetReadBuffer(4096)
	if _, err := io.WriteString(nc, "GET /admin/v2/persistent/public/default/unread/subscription/s/position/1 HTTP/1.1\r\nHost: broker\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// Never read. Another request is served once the write timeout frees the slot; before, it
	// met 503 after waiting the read timeout, every time.
	brokertest.WaitForNil(t, 45*time.Second, "another request served", func() error {
		resp, body := do(t, http.MethodGet, s.URL()+"/admin/v2/clusters")
		switch resp.StatusCode {
		case http.StatusOK:
			return nil
		case http.StatusServiceUnavailable:
			return fmt.Errorf("while an answer is not read: %d %s", resp.StatusCode, body)
		}
		t.Fatalf("while an answer is not read: %d %s", resp.StatusCode, body)
		return nil
	})
}
