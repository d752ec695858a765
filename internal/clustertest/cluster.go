//go:build clustertest

// Package clustertest starts one letterbox broker that behaves towards clients as a
// three-broker upstream cluster does, for the tests of clients that must survive real clusters:
// three front ends on 127.0.0.2, 127.0.0.3 and 127.0.0.4 (so that a redirect between them
// changes host), each owning some topics and partitions; lookups at a non-owner redirect to
// the owner (or, behind the optional proxy, answer Connect through it); the admin API answers
// 307 to the owner's web URL for topic-level calls; ownership moves on demand, the old owner
// closing producers and consumers with reconnect allowed as an unload does. The front ends
// share one broker core, as upstream's brokers share BookKeeper and the metadata store, so a
// topic's data, cursors and deduplication state survive a move. A foreign host on 127.0.0.6
// (StartForeign), outside the cluster, is where a hostile redirect or broker list leads, and
// records the credentials it is sent.
//
// Test code only: no package of the binary imports it, and it builds only with the clustertest
// tag (as the broker's front ends it drives), which `make test` passes.
package clustertest

import (
	"fmt"
	"hash/fnv"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/auth/authtest"
	"github.com/letterbox-dev/letterbox/broker/web"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
)

// Hosts are the loopback addresses of the three brokers (ForeignHost, foreign.go, is outside
// the cluster).
var Hosts = []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"}

// ProxyHost is where the proxy listens when Options.Proxy asks for one.
const ProxyHost = "127.0.0.5"

// Options configure a cluster.
type Options struct {
	// Config changes the broker core's configuration (authentication, deduplication...).
	Config func(*broker.Config)
	// Proxy starts a Pulsar-proxy front end on ProxyHost as well.
	Proxy bool
	// TokenAuth turns on token authentication and authorization, with the superuser "admin"
	// (Cluster.Token makes tokens).
	TokenAuth bool
}

// Cluster is a running fixture, stopped when the test ends.
type Cluster struct {
	Broker  *broker.Broker
	Members []*Member
	// Proxy is the proxy front end (binary protocol only), when Options.Proxy asked for it.
	Proxy *Member

	core  *web.Server
	proxy *httputil.ReverseProxy
	key   []byte // the token secret, with Options.TokenAuth

	mu         sync.Mutex
	owners     map[string]int    // topic full name → member index, once moved
	outsider   map[string]string // topic full name → a web URL outside the cluster (RedirectOutside)
	brokerList string            // a web URL outside the cluster the broker list is asked at (RedirectBrokerList)
}

// Member is one broker of the cluster.
type Member struct {
	Index      int
	Host       string
	ServiceURL string // pulsar://host:port
	WebURL     string // http://host:port

	c   *Cluster
	srv *http.Server
}

// StopWeb stops the member's admin API, as a broker whose web service is down or unreachable:
// every call to it fails, and so do the redirects that lead to it.
func (m *Member) StopWeb() { m.srv.Close() }

// Start starts the cluster.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	requireLoopbackHosts(t)
	cfg := broker.DefaultConfig()
	cfg.Logger = brokertest.Logger(t)
	cfg.PoisonFrameBuffers = true
	var key []byte
	if opts.TokenAuth {
		var path string
		path, key = authtest.SecretKey(t)
		cfg.AuthenticationEnabled, cfg.AuthorizationEnabled = true, true
		cfg.TokenSecretKey = path
		cfg.SuperUserRoles = []string{"admin"}
	}
	if opts.Config != nil {
		opts.Config(&cfg)
	}
	b, err := broker.New(broker.WithConfig(cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	core, err := web.New(b, "127.0.0.1:0", cfg.Logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	coreURL, err := url.Parse(core.URL())
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{
		Broker:   b,
		core:     core,
		proxy:    httputil.NewSingleHostReverseProxy(coreURL),
		key:      key,
		owners:   make(map[string]int),
		outsider: make(map[string]string),
	}
	for i, host := range Hosts {
		m := &Member{Index: i, Host: host, c: c}
		m.ServiceURL = c.serve(t, host, false)
		ln := listen(t, host)
		m.WebURL = "http://" + ln.Addr().String()
		m.srv = &http.Server{Handler: m}
		go m.srv.Serve(ln)
		t.Cleanup(func() { m.srv.Close() })
		c.Members = append(c.Members, m)
	}
	if opts.Proxy {
		c.Proxy = &Member{Index: -1, Host: ProxyHost, c: c}
		c.Proxy.ServiceURL = c.serve(t, ProxyHost, true)
	}
	b.SetOwnership(c)
	return c
}

// serve starts a binary-protocol front end on host and returns its service URL.
func (c *Cluster) serve(t testing.TB, host string, proxy bool) string {
	ln := listen(t, host)
	u := "pulsar://" + ln.Addr().String()
	c.Broker.Serve(ln, broker.FrontEnd{ServiceURL: u, Proxy: proxy})
	return u
}

// requireLoopbackHosts skips the test where the fixture's loopback addresses do not bind
// (Linux binds all of 127/8; macOS only 127.0.0.1 unless aliased), and fails it in CI, where
// the prerequisite must be there.
func requireLoopbackHosts(t testing.TB) {
	t.Helper()
	for _, host := range append(slices.Clone(Hosts), ProxyHost, ForeignHost) {
		ln, err := net.Listen("tcp", host+":0")
		if err != nil {
			msg := fmt.Sprintf("clustertest: loopback address %s does not bind (%v); on macOS: sudo ifconfig lo0 alias %s up", host, err, host)
			if os.Getenv("CI") != "" {
				t.Fatal(msg + ", and CI is set: the cluster tests cannot run")
			}
			t.Skip(msg)
		}
		ln.Close()
	}
}

func listen(t testing.TB, host string) net.Listener {
	ln, err := net.Listen("tcp", host+":0")
	if err != nil {
		t.Fatalf("clustertest: %v (the fixture needs the loopback addresses 127.0.0.2-6)", err)
	}
	return ln
}

// Token returns a token for role, valid for an hour (Options.TokenAuth).
func (c *Cluster) Token(t testing.TB, role string) string {
	if c.key == nil {
		t.Fatal("clustertest: Token without Options.TokenAuth")
	}
	return authtest.Token(t, c.key, role, time.Hour)
}

// ServiceURL is the service URL clients start from: the first broker's, or the proxy's.
func (c *Cluster) ServiceURL() string {
	if c.Proxy != nil {
		return c.Proxy.ServiceURL
	}
	return c.Members[0].ServiceURL
}

// AdminURL is the web URL admin clients start from: the first broker's.
func (c *Cluster) AdminURL() string { return c.Members[0].WebURL }

// Owner implements broker.Ownership.
func (c *Cluster) Owner(topic string) string { return c.Members[c.OwnerIndex(topic)].ServiceURL }

// OwnerIndex returns the index of the member that owns topic (a partition's or
// non-partitioned topic's full name): where it was moved last, else partition N's is N mod 3
// (so a partitioned topic is spread over the three) and other topics' a hash of the name.
func (c *Cluster) OwnerIndex(topic string) int {
	c.mu.Lock()
	i, ok := c.owners[topic]
	c.mu.Unlock()
	if ok {
		return i
	}
	if n := naming.PartitionIndex(topic); n >= 0 {
		return n % len(c.Members)
	}
	h := fnv.New32a()
	h.Write([]byte(topic))
	return int(h.Sum32() % uint32(len(c.Members)))
}

// OwnerOf returns the member that owns topic.
func (c *Cluster) OwnerOf(topic string) *Member { return c.Members[c.OwnerIndex(topic)] }

// Move gives topic (a partition's or non-partitioned topic's full name) to member to, as
// upstream moves a bundle: the topic is unloaded (its producers and consumers closed with
// reconnect allowed, its cursors and deduplication state stored), and its clients, refused
// at the old owner, look it up again and reopen it at the new one. It returns how many
// producers and consumers the topic had when it moved.
func (c *Cluster) Move(topic string, to int) (producers, consumers int) {
	if to < 0 || to >= len(c.Members) {
		panic(fmt.Sprintf("clustertest: no member %d", to))
	}
	producers, consumers = c.Attached(topic)
	c.mu.Lock()
	c.owners[topic] = to
	c.mu.Unlock()
	if err := c.Broker.UnloadTopic(topic); err != nil {
		panic(fmt.Sprintf("clustertest: unload %s: %v", topic, err))
	}
	return producers, consumers
}

// RedirectOutside makes every member answer topic-level admin calls about topic with a 307 to
// webURL, a host outside the cluster, as a misconfigured or hostile broker might.
func (c *Cluster) RedirectOutside(topic, webURL string) {
	c.mu.Lock()
	c.outsider[topic] = strings.TrimSuffix(webURL, "/")
	c.mu.Unlock()
}

// RedirectBrokerList makes every member answer the calls for the cluster's active brokers
// (/admin/v2/brokers, /admin/v2/brokers/{cluster}) with a 307 to webURL, a host outside the
// cluster, whose answer then names hosts that are none of the cluster's.
func (c *Cluster) RedirectBrokerList(webURL string) {
	c.mu.Lock()
	c.brokerList = strings.TrimSuffix(webURL, "/")
	c.mu.Unlock()
}

// TopicOwnedBy returns a persistent topic of public/default, named from base, that member i
// owns before any move.
func (c *Cluster) TopicOwnedBy(base string, i int) string {
	for n := 0; ; n++ {
		topic := "persistent://public/default/" + base + "-" + strconv.Itoa(n)
		if c.OwnerIndex(topic) == i {
			return topic
		}
	}
}

// Attached returns how many producers and consumers topic has now.
func (c *Cluster) Attached(topic string) (producers, consumers int) {
	st, err := c.Broker.TopicStats(topic, broker.StatsOptions{})
	if err != nil {
		return 0, 0
	}
	for _, s := range st.Subscriptions {
		consumers += len(s.Consumers)
	}
	return len(st.Publishers), consumers
}

// AwaitAttached waits up to d for topic to have at least the producers and consumers asked
// (clients come back after a move once they have looked the topic up again); false if it
// did not.
func (c *Cluster) AwaitAttached(topic string, producers, consumers int, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; {
		p, cs := c.Attached(topic)
		if p >= producers && cs >= consumers {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// MoveLosingReceipts moves topic as Move does, after the old owner has lost the receipts of
// what it stored lately (at least one, or whatever a second brings), as when the old owner's
// connections go before its answers do: the producers' clients must send those messages again
// to the new owner, and only deduplication keeps the topic from holding them twice. It
// returns the producers and consumers closed and the receipts lost. It uses the broker's
// interceptor (Broker.Intercept), replacing any other while it runs.
func (c *Cluster) MoveLosingReceipts(topic string, to int) (producers, consumers, lost int) {
	// The receipts of the topic's open ledger (the last one listed) are the ones to lose.
	st, err := c.Broker.InternalStats(topic)
	if err != nil || len(st.Ledgers) == 0 {
		producers, consumers = c.Move(topic, to)
		return producers, consumers, 0
	}
	open := st.Ledgers[len(st.Ledgers)-1].LedgerID
	var dropped atomic.Int64
	c.Broker.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		if dir == broker.Outbound && cmd.GetType() == pb.BaseCommand_SEND_RECEIPT &&
			int64(cmd.GetSendReceipt().GetMessageId().GetLedgerId()) == open {
			dropped.Add(1)
			return broker.Verdict{Drop: true}
		}
		return broker.Verdict{}
	})
	for deadline := time.Now().Add(time.Second); dropped.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	// The receipts the new owner sends (the duplicates' among them) must get through.
	c.Broker.Intercept(nil)
	producers, consumers = c.Move(topic, to)
	return producers, consumers, int(dropped.Load())
}
