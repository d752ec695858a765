//go:build clustertest

package admin_test

import (
	"net/http"
	"strings"
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
	outside := clustertest.StartForeign(t)
	lost := c.TopicOwnedBy("lost", 2)
	c.RedirectOutside(lost, outside.URL)
	if _, err := ad.Stats(ctx, lost); err != nil {
		t.Fatalf("client/admin redirected outside: %v", err)
	}
	if reqs, cred := outside.Requests(), outside.Credentialed(); len(reqs) != 1 || len(cred) != 0 {
		t.Fatalf("outside the cluster: %+v; want one call without credentials", reqs)
	}
}

// The cluster's broker list, asked at the admin URL before the token is withheld from a
// redirect, names the owner: the token follows the redirect at the first call, with no
// trusted host configured.
func TestClusterBrokerListTrustsItsBrokers(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{TokenAuth: true})
	topic := c.TopicOwnedBy("listed", 2)
	if err := c.Broker.CreateTopic(topic, nil); err != nil {
		t.Fatal(err)
	}
	ad, err := admin.New(admin.Options{URL: c.AdminURL(), Token: c.Token(t, "admin")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := brokertest.Ctx(t, 30*time.Second)
	if _, err := ad.Stats(ctx, topic); err != nil {
		t.Fatalf("stats of a topic another broker owns: %v", err)
	}
	ids, err := ad.ClusterBrokers(ctx)
	if err != nil || len(ids) != len(c.Members) {
		t.Fatalf("the cluster's brokers: %v, %v", ids, err)
	}
}

// A role that may not list the brokers (upstream lists them to superusers only) still has its
// token follow a redirect to the owner: the lookup of the topic, answered by a host of the
// cluster, names it.
func TestClusterLookupTrustsTheOwner(t *testing.T) {
	c := clustertest.Start(t, clustertest.Options{TokenAuth: true})
	topic := c.TopicOwnedBy("looked-up", 2)
	if err := c.Broker.CreateTopic(topic, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Broker.GrantNamespacePermission("public/default", "app", []string{"produce", "consume"}); err != nil {
		t.Fatal(err)
	}
	ad, err := admin.New(admin.Options{URL: c.AdminURL(), Token: c.Token(t, "app")})
	if err != nil {
		t.Fatal(err)
	}
	ctx := brokertest.Ctx(t, 30*time.Second)
	if _, err := ad.ClusterBrokers(ctx); admin.StatusOf(err) != http.StatusUnauthorized && admin.StatusOf(err) != http.StatusForbidden {
		t.Fatalf("the broker list for a role that is no superuser: %v, want a refusal", err)
	}
	if _, err := ad.Stats(ctx, topic); err != nil {
		t.Fatalf("stats of a topic another broker owns: %v", err)
	}
	l, err := ad.Lookup(ctx, topic)
	if err != nil || l.HTTPURL != c.Members[2].WebURL {
		t.Fatalf("lookup named %s (%v), want the owner %s", l.HTTPURL, err, c.Members[2].WebURL)
	}
}
