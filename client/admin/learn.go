package admin

import (
	"context"
	"net/url"
	"strings"
	"sync"
)

// Learning the cluster's hosts. A broker answers an admin call about a topic it does not own
// with a redirect to the owner, a host the client may not know yet. Before it withholds the
// credentials from such a redirect, the client asks the cluster, through the admin URL: once,
// for its broker list (ClusterBrokers), and once per topic, for the topic's owner (Lookup).
// A host becomes trusted only from an answer a trusted host gave (trust.go), never from a list
// or a redirect an untrusted host gave, so a redirect out of the cluster still goes without
// credentials.

// learnState is what the client has asked the cluster so far.
type learnState struct {
	mu sync.Mutex
	// brokers: the broker list was answered (whatever it said): not asked again.
	brokers bool
	// looked: the topics looked up after a redirect.
	looked map[string]bool
}

// learning marks the context of the requests that learn hosts, whose own redirects must not
// start learning again.
type learning struct{}

// learnHosts asks the cluster about the hosts around a redirect of a request to from, which
// led to target, and reports whether target is a host of the cluster after all.
func (c *Client) learnHosts(ctx context.Context, from, target *url.URL) bool {
	if ctx.Value(learning{}) != nil {
		return false
	}
	ctx = context.WithValue(ctx, learning{}, true)
	ls := &c.learned
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if !ls.brokers {
		_, err := c.ClusterBrokers(ctx)
		// An answer, even a refusal (upstream lists brokers to superusers only), is final for
		// this client; a failure to reach the cluster is not.
		ls.brokers = err == nil || StatusOf(err) != 0 || isUntrustedAnswer(err)
		if c.trusted.trusts(target) {
			return true
		}
	}
	topic, ok := topicOfPath(from.EscapedPath())
	if !ok || ls.looked[topic] {
		return false
	}
	if _, err := c.Lookup(ctx, topic); err == nil || StatusOf(err) != 0 {
		if ls.looked == nil {
			ls.looked = map[string]bool{}
		}
		ls.looked[topic] = true
	}
	return c.trusted.trusts(target)
}

// topicOfPath reads the topic of an admin v2 path about one
// (/admin/v2/{domain}/{tenant}/{namespace}/{topic}[/...]).
func topicOfPath(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/admin/v2/")
	if !ok {
		return "", false
	}
	parts := strings.SplitN(rest, "/", 5)
	if len(parts) < 4 || (parts[0] != "persistent" && parts[0] != "non-persistent") {
		return "", false
	}
	seg := make([]string, 3)
	for i := range seg {
		s, err := url.PathUnescape(parts[i+1])
		if err != nil || s == "" {
			return "", false
		}
		seg[i] = s
	}
	if len(parts) == 4 && seg[2] == "partitioned" { // the namespace's list of partitioned topics
		return "", false
	}
	return parts[0] + "://" + seg[0] + "/" + seg[1] + "/" + seg[2], true
}
