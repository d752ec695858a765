package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// clusterNames asks the cluster of the line's client flags (or --context) for the names a
// completion offers, each answer within timeout: past it, or on any error, it offers nothing.
// A tab key must never hang on a cluster that does not answer.
type clusterNames struct {
	timeout time.Duration
}

// ask runs fn with the admin API of the cluster cf names, within the timeout, and returns
// what it offers: nothing when fn fails or the time runs out. It writes nothing: completion
// prints its candidates alone.
func (cn clusterNames) ask(ctx context.Context, cf *clientFlags, fn func(ctx context.Context, ad *admin.Client) ([]candidate, error)) completion {
	if cn.timeout <= 0 || cf.validate() != nil {
		return completion{}
	}
	if _, code := cf.resolveContext("letterbox", io.Discard); code != ExitOK {
		return completion{}
	}
	ctx, cancel := context.WithTimeout(ctx, cn.timeout)
	defer cancel()
	ad, cl, err := cf.connect(ctx, io.Discard)
	if err != nil {
		return completion{}
	}
	cl.Close() // names come from the admin API alone
	cands, err := fn(ctx, ad)
	if err != nil || ctx.Err() != nil {
		return completion{}
	}
	slices.SortFunc(cands, func(a, b candidate) int { return strings.Compare(a.value, b.value) })
	return completion{candidates: cands}
}

// namespacesFor lists the namespaces to look in for a topic name starting with cur: the one
// cur names when it names one (tenant/ns/…, persistent://tenant/ns/…), else all of them.
func namespacesFor(ctx context.Context, ad *admin.Client, cur string) ([]string, error) {
	rest := cur
	if _, after, ok := strings.Cut(cur, "://"); ok {
		rest = after
	}
	if parts := strings.SplitN(rest, "/", 3); len(parts) == 3 {
		return []string{parts[0] + "/" + parts[1]}, nil
	}
	return dlqops.Namespaces(ctx, ad, func(error) {})
}

// topicCandidate is a topic as the user types it: the short name the commands take, unless cur
// already spells the full name.
func topicCandidate(full, cur string) string {
	if strings.Contains(cur, "://") {
		return full
	}
	return shortTopic(full)
}

// topics offers the persistent topics of the cluster whose names start with cur (a
// partitioned topic once, not each partition).
func (cn clusterNames) topics(ctx context.Context, cf *clientFlags, cur string) completion {
	return cn.ask(ctx, cf, func(ctx context.Context, ad *admin.Client) ([]candidate, error) {
		namespaces, err := namespacesFor(ctx, ad, cur)
		if err != nil {
			return nil, err
		}
		var cands []candidate
		for _, ns := range namespaces {
			plain, err := ad.Topics(ctx, ns, true)
			if err != nil {
				continue // a namespace the credentials may not list hides no other
			}
			partitioned, err := ad.PartitionedTopics(ctx, ns, true)
			if err != nil {
				continue
			}
			names := slices.Clone(partitioned)
			for _, full := range plain {
				if base := naming.BaseName(full); base != full && slices.Contains(partitioned, base) {
					continue // a partition: its partitioned topic stands for it
				}
				names = append(names, full)
			}
			for _, full := range names {
				if v := topicCandidate(full, cur); strings.HasPrefix(v, cur) {
					cands = append(cands, candidate{value: v})
				}
			}
		}
		return cands, nil
	})
}

// dlqs offers the DLQs of the cluster, by the rule `letterbox dlq ls` lists them with.
func (cn clusterNames) dlqs(ctx context.Context, cf *clientFlags, cur string) completion {
	return cn.ask(ctx, cf, func(ctx context.Context, ad *admin.Client) ([]candidate, error) {
		namespaces, err := namespacesFor(ctx, ad, cur)
		if err != nil {
			return nil, err
		}
		finder := dlqops.NewFinder(ad)
		var cands []candidate
		for _, ns := range namespaces {
			rows, err := letterTopics(ctx, ad, finder, ns, false)
			if err != nil {
				continue
			}
			for _, r := range rows {
				if v := topicCandidate(r.Topic, cur); strings.HasPrefix(v, cur) {
					cands = append(cands, candidate{v, fmt.Sprintf("backlog %d", r.Backlog)})
				}
			}
		}
		return cands, nil
	})
}

// namespaces offers the cluster's namespaces, tenant/ns.
func (cn clusterNames) namespaces(ctx context.Context, cf *clientFlags, cur string) completion {
	return cn.ask(ctx, cf, func(ctx context.Context, ad *admin.Client) ([]candidate, error) {
		namespaces, err := dlqops.Namespaces(ctx, ad, func(error) {})
		return choices(namespaces, cur).candidates, err
	})
}

// subscriptions offers the subscriptions of topic (as the user typed it).
func (cn clusterNames) subscriptions(ctx context.Context, cf *clientFlags, topic, cur string) completion {
	if topic == "" {
		return completion{}
	}
	return cn.ask(ctx, cf, func(ctx context.Context, ad *admin.Client) ([]candidate, error) {
		full, err := dlqops.Resolve(ctx, ad, topic)
		if err != nil {
			return nil, err
		}
		var subs []string
		if n, err := ad.Partitions(ctx, full); err == nil && n > 0 {
			st, err := ad.PartitionedStats(ctx, full, false)
			if err != nil {
				return nil, err
			}
			for s := range st.Subscriptions {
				subs = append(subs, s)
			}
		} else if subs, err = ad.Subscriptions(ctx, full); err != nil {
			return nil, err
		}
		return choices(subs, cur).candidates, nil
	})
}
