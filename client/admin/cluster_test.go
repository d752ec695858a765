package admin_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/internal/clustertest"
)

// Before and after, on the three-broker fixture with token authentication: an admin call
// about a topic another broker owns is redirected (307) to that broker's host. Go's plain HTTP
// client drops the token on that change of host and meets 401; client/admin keeps it for the
// cluster's hosts, and follows a redirect out of the cluster without it.
func TestClusterRedirectKeepsTheTokenForTheClusterOnly(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{TokenAuth: true})
	token := c.Token(t, "admin")
	topic := c.TopicOwnedBy("redirected", 1)
	if err := c.Broker.CreateTopic(topic, nil); err != nil {
		t.Fatal(err)
	}
	statsPath := "/admin/v2/" + strings.Replace(topic, "://", "/", 1) + "/stats"

	// Before: net/http follows the 307 from 127.0.0.2 to 127.0.0.3 and drops Authorization.
	req, err := http.NewRequest("GET", c.AdminURL()+statsPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Request.URL.Host != strings.TrimPrefix(c.Members[1].WebURL, "http://") {
		t.Fatalf("plain client: %d from %s; want the owner's 401", resp.StatusCode, resp.Request.URL.Host)
	}

	// After: client/admin, told the cluster's hosts, keeps the token across the redirect.
	var hosts []string
	for _, m := range c.Members {
		hosts = append(hosts, m.WebURL)
	}
	ad, err := admin.New(admin.Options{URL: c.AdminURL(), Token: token, TrustedHosts: hosts})
	if err != nil {
		t.Fatal(err)
	}
	ctx := brokertest.Ctx(t, 30*time.Second)
	if _, err := ad.Stats(ctx, topic); err != nil {
		t.Fatalf("client/admin across the redirect: %v", err)
	}

	// A broker that redirects out of the cluster: followed, without the token.
	outside := newOutsider(t)
	lost := c.TopicOwnedBy("lost", 2)
	c.RedirectOutside(lost, outside.URL)
	if _, err := ad.Stats(ctx, lost); err != nil {
		t.Fatalf("client/admin redirected outside: %v", err)
	}
	if calls, auth := outside.seen(); calls != 1 || auth != "" {
		t.Fatalf("outside the cluster: %d calls, Authorization %q; want one call without it", calls, auth)
	}
}

// outsider is a web server on a loopback host outside the cluster that answers any stats call.
type outsider struct {
	*httptest.Server
	mu    sync.Mutex
	calls int
	auth  string
}

func newOutsider(t *testing.T) *outsider {
	o := &outsider{}
	ln, err := net.Listen("tcp", "127.0.0.6:0")
	if err != nil {
		t.Fatal(err)
	}
	o.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.calls++
		o.auth = r.Header.Get("Authorization")
		o.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}"))
	}))
	o.Listener.Close()
	o.Listener = ln
	o.Start()
	t.Cleanup(o.Close)
	return o
}

// seen returns the calls received and the Authorization header of the last.
func (o *outsider) seen() (calls int, auth string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.calls, o.auth
}

// A lookup answered by a host of the cluster names the topic's owner, which the client trusts
// from then on: the token follows the redirects to it.
func TestClusterLookupTrustsTheOwner(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{TokenAuth: true})
	topic := c.TopicOwnedBy("looked-up", 2)
	if err := c.Broker.CreateTopic(topic, nil); err != nil {
		t.Fatal(err)
	}
	ad, err := admin.New(admin.Options{URL: c.AdminURL(), Token: c.Token(t, "admin")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := brokertest.Ctx(t, 30*time.Second)
	if _, err := ad.Stats(ctx, topic); admin.StatusOf(err) != http.StatusUnauthorized {
		t.Fatalf("stats before any lookup: %v, want 401 (the owner is not known to be of the cluster)", err)
	}
	l, err := ad.Lookup(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if l.HTTPURL != c.Members[2].WebURL {
		t.Fatalf("lookup named %s, want the owner %s", l.HTTPURL, c.Members[2].WebURL)
	}
	if _, err := ad.Stats(ctx, topic); err != nil {
		t.Fatalf("stats after the lookup: %v", err)
	}
}
