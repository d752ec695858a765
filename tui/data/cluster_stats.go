package data

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/letterbox-dev/letterbox/client/admin"
)

// Cluster-wide stats. Upstream's GET /admin/v2/broker-stats/topics answers for the topics of
// the broker that receives it only: behind a load balancer each refresh would reach another
// broker and most topics would show no stats, or flicker. So the topics screen asks the
// admin URL's cluster for its active brokers (client/admin's ClusterBrokers) and each broker
// for its own topics at its own web address, and merges the answers.
//
// Upstream allows these calls to superusers only, and a proxy may hide the brokers: when the
// brokers cannot be listed, or one refuses (401/403), the stats come as before, from the admin
// URL (one bulk call, else one call per topic). A broker that does not answer is named in the
// row (StaleBroker) and its topics keep their last stats, marked stale, rather than showing
// zero; the topics the others do not report are asked one by one through the admin URL, which
// redirects each to its owner.
//
// The brokers the cluster names are its hosts, to which the token may go, when a host of the
// cluster named them: a list a redirect brought from elsewhere is not used at all.

// brokersTTL is how long a list of active brokers is reused before it is asked again.
const brokersTTL = 30 * time.Second

// clusterState is what Admin remembers of the cluster between refreshes.
type clusterState struct {
	mu        sync.Mutex
	brokers   []string  // active brokers' web host:port, as the cluster names them
	brokersAt time.Time // when brokers was read; zero: never
	clients   map[string]*admin.Client
	last      map[string]Stats  // each topic's last stats
	lastFrom  map[string]string // the broker that last reported each topic
}

// activeBrokers returns the cluster's brokers (cached for brokersTTL); an error when they
// cannot be listed (not a superuser, a proxy, an old broker, an answer from elsewhere).
func (a *Admin) activeBrokers(ctx context.Context) ([]string, error) {
	cs := &a.cluster
	cs.mu.Lock()
	if !cs.brokersAt.IsZero() && time.Since(cs.brokersAt) < brokersTTL {
		defer cs.mu.Unlock()
		return cs.brokers, nil
	}
	cs.mu.Unlock()
	ids, err := a.ac.ClusterBrokers(ctx)
	if err != nil {
		if admin.StatusOf(err) != 0 || errors.Is(err, admin.ErrUntrustedAnswer) {
			// The cluster answered, and will not say (not a superuser, a proxy, an old
			// broker), or something else answered: do not ask again on every refresh.
			cs.mu.Lock()
			cs.brokers, cs.brokersAt = nil, time.Now()
			cs.mu.Unlock()
		}
		return nil, atPath("/admin/v2/brokers", err)
	}
	slices.Sort(ids)
	cs.mu.Lock()
	cs.brokers, cs.brokersAt = ids, time.Now()
	cs.mu.Unlock()
	return ids, nil
}

// topicAdmin is the admin client for calls a broker may redirect to another (topic-level
// calls, whose owner may be any broker): the cluster's brokers are learned first (cached), so
// that the token follows the redirect. A cluster that will not name them is asked all the
// same; its redirects then go without the token, and their 401 says why.
func (a *Admin) topicAdmin(ctx context.Context) *admin.Client {
	a.activeBrokers(ctx)
	return a.ac
}

// brokerClient is an admin client of one broker, with the Admin's credentials and hosts.
func (a *Admin) brokerClient(id string) (*admin.Client, error) {
	cs := &a.cluster
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c := cs.clients[id]; c != nil {
		return c, nil
	}
	ao := a.adminOptions(a.ac.BrokerURL(id))
	ao.TrustedHosts = append(slices.Clone(ao.TrustedHosts), a.base.String())
	for _, b := range cs.brokers {
		ao.TrustedHosts = append(ao.TrustedHosts, a.ac.BrokerURL(b))
	}
	c, err := admin.New(ao)
	if err != nil {
		return nil, err
	}
	if cs.clients == nil {
		cs.clients = map[string]*admin.Client{}
	}
	cs.clients[id] = c
	return c, nil
}

// errBulkRefused says a broker refused broker-stats/topics (not a superuser): the stats come
// one topic at a time instead.
var errBulkRefused = errors.New("broker-stats/topics refused")

// clusterBulkStats gathers broker-stats/topics of every broker. ok is false when the stats
// must come one topic at a time instead (no bulk endpoint, refused); failed names the brokers
// that did not answer.
func (a *Admin) clusterBulkStats(ctx context.Context) (stats map[string]Stats, from map[string]string, failed []string, ok bool) {
	a.mu.Lock()
	skip := time.Now().Before(a.bulkUntil)
	a.mu.Unlock()
	if skip {
		return nil, nil, nil, false
	}
	ids, err := a.activeBrokers(ctx)
	if err != nil || len(ids) <= 1 {
		// One broker, or brokers we may not list: the admin URL's own answer is the cluster's.
		s, ok := a.bulkStats(ctx)
		return s, nil, nil, ok
	}
	type answer struct {
		id    string
		stats map[string]Stats
		err   error
	}
	answers := make(chan answer, len(ids))
	for _, id := range ids {
		go func() {
			s, err := a.brokerBulkStats(ctx, id)
			answers <- answer{id, s, err}
		}()
	}
	stats, from = map[string]Stats{}, map[string]string{}
	refused := false
	for range ids {
		ans := <-answers
		switch {
		case errors.Is(ans.err, errBulkRefused):
			refused = true
		case ans.err != nil:
			failed = append(failed, ans.id)
		}
		for name, s := range ans.stats {
			stats[name], from[name] = s, ans.id
		}
	}
	if refused {
		a.mu.Lock()
		a.bulkUntil = time.Now().Add(time.Minute)
		a.mu.Unlock()
		return nil, nil, nil, false
	}
	slices.Sort(failed)
	return stats, from, failed, true
}

// brokerBulkStats reads one broker's broker-stats/topics at its own web address.
func (a *Admin) brokerBulkStats(ctx context.Context, id string) (map[string]Stats, error) {
	c, err := a.brokerClient(id)
	if err != nil {
		return nil, err
	}
	raw, err := c.BrokerTopicStats(ctx)
	if err != nil {
		if IsUnauthorized(err) {
			return nil, errBulkRefused
		}
		return nil, atPath("/admin/v2/broker-stats/topics", err)
	}
	return statsByTopic(raw), nil
}

// rememberStats keeps the rows' stats as their last known ones, with the broker that gave
// them.
func (a *Admin) rememberStats(rows []TopicRow, from map[string]string) {
	cs := &a.cluster
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.last == nil {
		cs.last, cs.lastFrom = map[string]Stats{}, map[string]string{}
	}
	for _, r := range rows {
		if r.StatsKnown && !r.StatsStale && r.Partitions == 0 {
			cs.last[r.Name] = r.Stats
			if b := from[r.Name]; b != "" {
				cs.lastFrom[r.Name] = b
			}
		}
	}
}

// markStale gives row its last known stats, marked stale, and names the broker that did not
// answer for it: the one that last reported it, else the ones that failed.
func (a *Admin) markStale(r *TopicRow, failed []string) {
	cs := &a.cluster
	cs.mu.Lock()
	defer cs.mu.Unlock()
	r.StatsStale = true
	r.StaleBroker = strings.Join(failed, ", ")
	if b := cs.lastFrom[r.Name]; b != "" && slices.Contains(failed, b) {
		r.StaleBroker = b
	}
	if s, ok := cs.last[r.Name]; ok {
		r.Stats, r.StatsKnown = s, true
	}
}
