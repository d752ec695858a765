package data

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// AdminOptions configure an Admin source.
type AdminOptions struct {
	AdminURL   string // http://host:8080
	ServiceURL string // pulsar://host:6650, for Tail and Produce
	Token      string // bearer token, "" for none
	// TokenFile, when set, is read again on every binary-protocol (re)connect, so a rotated
	// token is picked up; Token still serves the admin API.
	TokenFile string
	// TLSTrustCertsFile is a PEM bundle of CAs for pulsar+ssl:// (HTTPClient covers https).
	TLSTrustCertsFile string
	// TLSAllowInsecureConnection skips the verification of the broker's certificate on
	// pulsar+ssl:// (a test cluster's self-signed one); HTTPClient covers https.
	TLSAllowInsecureConnection bool
	// TLSCertFile and TLSKeyFile are a client certificate for pulsar+ssl:// (mTLS; with no
	// token it authenticates); HTTPClient covers https.
	TLSCertFile string
	TLSKeyFile  string
	// HTTPClient defaults to a client with a 10 s timeout; pass one with TLS settings for https.
	HTTPClient *http.Client
	// TokenSource, when set, authenticates instead of Token and TokenFile (OAuth2 client
	// credentials): the binary protocol asks it on every (re)connect and refresh challenge,
	// the admin API on every call, so a renewed token is always the one sent.
	TokenSource TokenSource
	// TrustedHosts are the cluster's hosts besides AdminURL's, to which the token may follow a
	// broker's redirect (admin.Options.TrustedHosts).
	TrustedHosts []string
	// Context is the config.toml context the cluster was opened with ("" none), and Cluster
	// the key of its action history (default: dlqops.ClusterKey of Context and AdminURL).
	Context string
	Cluster string
}

// TokenSource is a renewable token (client/oauth2's): the binary protocol asks Token, the
// admin API Authorization (the header's value).
type TokenSource interface {
	client.TokenRefresher
	Authorization(ctx context.Context) (string, error)
}

// Admin is a Source over the upstream admin REST API (/admin/v2), so it works against the
// embedded broker and any Pulsar cluster alike. Tenants, namespaces, topic lists, partitions,
// schemas, stats and peeks go through client/admin: errors.go words its errors as the
// screens show them, stats.go reduces its stats to what they show. Tail and Produce need the
// binary protocol: see binary.go.
type Admin struct {
	opts AdminOptions
	base *url.URL
	ac   *admin.Client

	finder *dlqops.Finder // which topics are DLQs and retry topics

	cluster clusterState // its brokers, and the topics' last stats (cluster_stats.go)

	mu        sync.Mutex
	bulkUntil time.Time // broker-stats/topics is not tried again before this
	bin       *binary
	verdicts  verdictCache
	listings  map[string]listing // the last listing of each namespace, for RowDetails (onscreen.go)
}

var _ Source = (*Admin)(nil)

// NewAdmin returns an Admin source; it does not connect until asked for data.
func NewAdmin(opts AdminOptions) (*Admin, error) {
	u, err := url.Parse(strings.TrimRight(opts.AdminURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("admin URL %q: want http://host:port or https://host:port", opts.AdminURL)
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	if opts.Cluster == "" {
		opts.Cluster = dlqops.ClusterKey(opts.Context, u.String())
	}
	opts.HTTPClient = hc
	a := &Admin{opts: opts, base: u}
	ac, err := admin.New(a.adminOptions(u.String()))
	if err != nil {
		return nil, err
	}
	a.ac, a.finder = ac, dlqops.NewFinder(ac)
	return a, nil
}

// adminOptions are the options of an admin client of url with the source's credentials.
func (a *Admin) adminOptions(url string) admin.Options {
	ao := admin.Options{URL: url, Token: a.opts.Token, TrustedHosts: a.opts.TrustedHosts,
		HTTPClient: a.opts.HTTPClient, Timeout: a.opts.HTTPClient.Timeout}
	if a.opts.TokenSource != nil {
		ao.Authorization = a.opts.TokenSource.Authorization
	}
	return ao
}

func (a *Admin) Endpoint() string { return a.base.String() }

// Service is the service URL applications connect to ("" when not known).
func (a *Admin) Service() string { return a.opts.ServiceURL }

// topicPath is /admin/v2/<domain>/<tenant>/<ns>/<local>.
func topicPath(topic string) string {
	n := ParseTopic(topic)
	return "/admin/v2/" + n.Domain() + "/" + url.PathEscape(n.Tenant) + "/" + url.PathEscape(n.Namespace) + "/" + url.PathEscape(n.Local)
}

func nsPath(ns string) (string, error) {
	t, n, ok := strings.Cut(ns, "/")
	if !ok || t == "" || n == "" {
		return "", fmt.Errorf("namespace %q: want tenant/namespace", ns)
	}
	return url.PathEscape(t) + "/" + url.PathEscape(n), nil
}

func (a *Admin) Namespaces(ctx context.Context) ([]string, error) {
	tenants, err := a.ac.Tenants(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range tenants {
		nss, err := a.ac.Namespaces(ctx, t)
		if err != nil {
			return nil, err
		}
		out = append(out, nss...)
	}
	sort.Strings(out)
	return out, nil
}

func (a *Admin) Topics(ctx context.Context, ns string) ([]TopicRow, error) {
	nss := []string{ns}
	if ns == "" {
		var err error
		if nss, err = a.Namespaces(ctx); err != nil {
			return nil, err
		}
	}
	// Every namespace's names first, then the rows in one slice of the right size: rows built
	// a namespace at a time and copied together were 30 MB more of garbage on a cluster of
	// 100,000 topics, whose listing is read again every minute.
	lists, err := a.namespaceLists(ctx, nss)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, l := range lists {
		n += len(l.plain) + len(l.parted)
	}
	rows := make([]TopicRow, 0, n)
	for i := range lists {
		rows = lists[i].appendRows(rows)
		lists[i] = nsList{}
	}
	a.remember(nss, rows)
	if len(rows) > OnScreenFrom {
		// Too many for broker-wide stats and samples every refresh: the screen asks for the
		// rows it shows (RowDetails).
		classifyCached(a.finder, rows)
	} else {
		a.fillStats(ctx, rows)
		classify(ctx, a.finder, rows)
	}
	now := time.Now()
	a.mu.Lock()
	a.verdicts.put(nss, rows, now)
	a.mu.Unlock()
	return rows, nil
}

// namespaceTopics lists a namespace's topics: the plain list (which holds partitions as
// x-partition-N) and the partitioned list, merged so that every partitioned topic has a row
// of its own followed by its partitions.
func (a *Admin) namespaceTopics(ctx context.Context, ns string) ([]TopicRow, error) {
	l, err := a.namespaceList(ctx, ns)
	if err != nil {
		return nil, err
	}
	return l.appendRows(make([]TopicRow, 0, len(l.plain)+len(l.parted))), nil
}

// nsList is a namespace's topic names as the admin API lists them.
type nsList struct {
	ns            string
	plain, parted []string
}

// listsAtOnce is how many namespaces are listed at a time: two requests each, and a cluster of
// a hundred namespaces was two hundred round trips one after the other.
const listsAtOnce = 8

// namespaceLists lists the namespaces nss, a few at a time, in their order; the first error
// ends it.
func (a *Admin) namespaceLists(ctx context.Context, nss []string) ([]nsList, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lists := make([]nsList, len(nss))
	errs := make([]error, len(nss))
	sem := make(chan struct{}, listsAtOnce)
	var wg sync.WaitGroup
	for i, ns := range nss {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if lists[i], errs[i] = a.namespaceList(ctx, ns); errs[i] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return lists, nil
}

func (a *Admin) namespaceList(ctx context.Context, ns string) (nsList, error) {
	if _, err := nsPath(ns); err != nil {
		return nsList{}, err
	}
	plain, err := a.ac.Topics(ctx, ns, true)
	if err != nil {
		return nsList{}, err
	}
	parted, err := a.ac.PartitionedTopics(ctx, ns, true)
	if err != nil && !IsNotFound(err) {
		return nsList{}, err
	}
	a.intern(ns, plain)
	return nsList{ns: ns, plain: plain, parted: parted}, nil
}

// appendRows appends the namespace's rows to rows: each partitioned topic, then the other
// topics and the partitions, which count towards their partitioned topic's row.
func (l nsList) appendRows(rows []TopicRow) []TopicRow {
	row := func(name string) TopicRow {
		n := ParseTopic(name)
		r := TopicRow{Name: canonicalName(name, n), Namespace: n.NamespaceName(), Local: n.Local}
		if n.InNamespace(l.ns) {
			r.Namespace = l.ns // the rows of a namespace share its name rather than hold a copy each
		}
		return r
	}
	first := len(rows)
	for _, name := range l.parted {
		rows = append(rows, row(name))
	}
	parents := make(map[string]int, len(l.parted))
	for i := first; i < len(rows); i++ {
		parents[rows[i].Name] = i
	}
	for _, name := range l.plain {
		r := row(name)
		if naming.PartitionIndex(r.Name) >= 0 {
			parent := naming.BaseName(r.Name)
			if i, ok := parents[parent]; ok {
				r.Parent = parent
				rows[i].Partitions++
			}
		}
		if _, dup := parents[r.Name]; !dup {
			rows = append(rows, r)
		}
	}
	return rows
}

// canonicalName is n's full name: name itself when the admin API listed it so (it does), a
// string less per topic of a large listing.
func canonicalName(name string, n naming.Topic) string {
	if d := n.Domain(); len(name) == len(d)+len("://")+len(n.Tenant)+1+len(n.Namespace)+1+len(n.Local) &&
		strings.HasPrefix(name, d+"://"+n.Tenant+"/"+n.Namespace+"/") && strings.HasSuffix(name, "/"+n.Local) {
		return name
	}
	return n.String()
}

// fillStats sets the stats of rows from every broker's broker-stats/topics, merged
// (cluster_stats.go), or one bulk call at the admin URL. Rows of a broker that did not answer
// keep their last stats, marked stale. Topics no bulk answer covers (a cluster without the
// endpoint, topics no broker has loaded since it started: brokers load a topic on first use,
// and broker-stats covers loaded ones only) come without stats: the screen asks for those it
// shows (RowDetails), and a topic's own stats load it, so it is in the brokers' stats from
// then on.
func (a *Admin) fillStats(ctx context.Context, rows []TopicRow) {
	stats, from, failed, ok := a.clusterBulkStats(ctx)
	if ok {
		var missing []*TopicRow
		for i := range rows {
			if rows[i].Partitions > 0 {
				continue
			}
			if s, ok := stats[rows[i].Name]; ok {
				rows[i].Stats, rows[i].StatsKnown = s, true
			} else if len(failed) > 0 {
				missing = append(missing, &rows[i])
			}
		}
		// What the brokers that answered do not report may be the silent ones' topics: ask
		// the admin URL, which redirects to the owner; what still has no answer is stale.
		a.topicStats(ctx, missing)
		for _, r := range missing {
			if !r.StatsKnown {
				a.markStale(r, failed)
			}
		}
	}
	a.rememberStats(rows, from)
	sumPartitions(rows)
}

// sumPartitions gives a partitioned topic's own row the sum of its partitions' stats.
func sumPartitions(rows []TopicRow) {
	idx := map[string]int{}
	for i := range rows {
		if rows[i].Partitions > 0 {
			idx[rows[i].Name] = i
			rows[i].Stats, rows[i].StatsKnown = Stats{}, true
		}
	}
	for _, r := range rows {
		if i, ok := idx[r.Parent]; ok && r.Parent != "" {
			p := &rows[i]
			if !r.StatsKnown {
				p.StatsKnown = false
			}
			p.RateIn += r.RateIn
			p.RateOut += r.RateOut
			p.InCounter += r.InCounter
			p.Backlog += r.Backlog
			p.BacklogEntriesOnly = p.BacklogEntriesOnly || r.BacklogEntriesOnly
			if r.Main.Sub != "" {
				p.Main = Backlog{Sub: r.Main.Sub, N: p.Main.N + r.Main.N, EntriesOnly: p.Main.EntriesOnly || r.Main.EntriesOnly}
			}
			p.Storage += r.Storage
			p.Producers += r.Producers
			p.Consumers += r.Consumers
			p.Subscriptions = max(p.Subscriptions, r.Subscriptions)
			if r.StatsStale {
				p.StatsStale = true
				p.StaleBroker = r.StaleBroker
			}
		}
	}
}

// topicStats asks each row's stats through the admin URL, eight at a time.
func (a *Admin) topicStats(ctx context.Context, rows []*TopicRow) {
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, r := range rows {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if ts, err := a.topicAdmin(ctx).Stats(ctx, r.Name); err == nil {
				r.Stats, r.StatsKnown = statsOf(ts), true
			}
		}()
	}
	wg.Wait()
}

// bulkStats reads GET /admin/v2/broker-stats/topics: namespace → bundle → domain → topic →
// stats. A cluster without it (404, 405, or a broker that refuses it) is not asked again for a
// minute.
func (a *Admin) bulkStats(ctx context.Context) (map[string]Stats, bool) {
	a.mu.Lock()
	skip := time.Now().Before(a.bulkUntil)
	a.mu.Unlock()
	if skip {
		return nil, false
	}
	raw, err := a.topicAdmin(ctx).BrokerTopicStats(ctx)
	if err != nil {
		a.mu.Lock()
		a.bulkUntil = time.Now().Add(time.Minute)
		a.mu.Unlock()
		return nil, false
	}
	return statsByTopic(raw), true
}

// partitions returns a topic's partition count (0 for a non-partitioned topic).
func (a *Admin) partitions(ctx context.Context, topic string) (int, error) {
	n, err := a.ac.Partitions(ctx, topic)
	if IsNotFound(err) {
		return 0, nil
	}
	return n, err
}

func (a *Admin) TopicDetail(ctx context.Context, topic string) (*TopicDetail, error) {
	topic = ParseTopic(topic).String()
	// The brokers the cluster names may be where the stats call is redirected: learn them
	// (cached) so that the token follows; a cluster that will not say is asked all the same.
	a.activeBrokers(ctx)
	parts, err := a.partitions(ctx, topic)
	if err != nil {
		return nil, err
	}
	var ts adminapi.TopicStats
	var perPartition map[string]adminapi.TopicStats
	if parts > 0 {
		// Per partition too: a consumer of a partitioned topic is one per partition it reads,
		// which the sum lists under the same name, once for each.
		var ps adminapi.PartitionedTopicStats
		ps, err = a.topicAdmin(ctx).PartitionedStats(ctx, topic, true)
		err = atPath(topicPath(topic)+"/partitioned-stats?perPartition=true", err)
		ts, perPartition = ps.TopicStats, ps.Partitions
	} else {
		ts, err = a.topicAdmin(ctx).Stats(ctx, topic)
		err = atPath(topicPath(topic)+"/stats", err)
	}
	if err != nil {
		return nil, err
	}
	d := &TopicDetail{Name: topic, Partitions: parts, Stats: statsOf(ts)}
	if v, err := a.Verdict(ctx, topic); err == nil {
		d.Verdict, d.VerdictKnown = v, true
	}
	consumers := 0
	for _, name := range dlqops.Subscriptions(ts, false) {
		ss := ts.Subscriptions[name]
		b := backlogOf(ts, name)
		s := Subscription{Name: name, Type: ss.Type, Backlog: b.N, EntriesOnly: b.EntriesOnly, Entries: ss.MsgBacklog,
			NonDurable: !ss.IsDurable, RateOut: ss.MsgRateOut, RateRedeliver: ss.MsgRateRedeliver, Unacked: ss.UnackedMessages}
		for _, c := range consumersOf(topic, parts, name, ss, perPartition) {
			if naming.IsOwn(c.Name) {
				continue // a replay's, or a reader's: not the application's
			}
			consumers++
			if c.SchemaType != "" {
				d.SchemaTypesReported = true
			}
			s.Consumers = append(s.Consumers, c)
		}
		d.Subscriptions = append(d.Subscriptions, s)
	}
	if consumers == 0 {
		d.SchemaTypesReported = true // nothing to report either way
	}
	for _, p := range ts.Publishers {
		d.Producers = append(d.Producers, Producer{Name: p.ProducerName, Address: p.Address, RateIn: p.MsgRateIn})
	}
	return d, nil
}

// consumersOf lists subscription sub's consumers: of each partition of a partitioned topic,
// with its index, when the stats hold them per partition; else as the stats list them.
func consumersOf(topic string, parts int, sub string, ss adminapi.SubscriptionStats, perPartition map[string]adminapi.TopicStats) []Consumer {
	consumer := func(c adminapi.ConsumerStats, partition int) Consumer {
		return Consumer{Name: c.ConsumerName, Address: c.Address, Permits: int(c.AvailablePermits),
			Unacked: int(c.UnackedMessages), RateOut: c.MsgRateOut, ConnectedSince: c.ConnectedSince,
			SchemaType: c.SchemaType, Partition: partition}
	}
	var out []Consumer
	if parts > 0 && len(perPartition) > 0 {
		for i := range parts {
			for _, c := range perPartition[naming.PartitionName(topic, i)].Subscriptions[sub].Consumers {
				out = append(out, consumer(c, i))
			}
		}
		return out
	}
	for _, c := range ss.Consumers {
		out = append(out, consumer(c, -1))
	}
	return out
}

func (a *Admin) Schema(ctx context.Context, topic string) (*SchemaInfo, error) {
	s, err := a.topicAdmin(ctx).Schema(ctx, ParseTopic(topic).String(), -1)
	if err != nil {
		if IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return &SchemaInfo{Type: s.Type, Version: s.Version, Definition: s.Data, Properties: s.Properties}, nil
}
