package data

import (
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// statsOf is what the screens show of a topic's stats (client/admin's, as upstream's
// TopicStats spells them). letterbox's own readers' subscriptions, consumers and rates out
// (naming.IsOwn) are left out: a scan is no subscription of the topic, its backlog no growth,
// and what it reads no consumption. Backlogs are in messages where the broker counts them (msgBacklogMessages), else in
// entries, and say so.
func statsOf(ts adminapi.TopicStats) Stats {
	s := Stats{RateIn: ts.MsgRateIn, RateOut: ts.MsgRateOut, InCounter: ts.MsgInCounter, Storage: ts.StorageSize,
		Producers: len(ts.Publishers)}
	for _, name := range dlqops.Subscriptions(ts, false) {
		b := backlogOf(ts, name)
		s.Backlog += b.N
		s.BacklogEntriesOnly = s.BacklogEntriesOnly || b.EntriesOnly
		s.Subscriptions++
		for _, c := range ts.Subscriptions[name].Consumers {
			if !naming.IsOwn(c.ConsumerName) {
				s.Consumers++
			}
		}
	}
	// The topic's rates out count what letterbox's own readers took too: not the topic's.
	for name, ss := range ts.Subscriptions {
		if naming.IsOwn(name) {
			s.RateOut = max(s.RateOut-ss.MsgRateOut, 0)
		}
	}
	if main := dlqops.MainSubscription(ts); main != "" {
		s.Main = backlogOf(ts, main)
	}
	return s
}

// backlogOf is sub's backlog in ts as the screens count it.
func backlogOf(ts adminapi.TopicStats, sub string) Backlog {
	b := dlqops.BacklogOf(ts, sub)
	if b.LettersKnown {
		return Backlog{Sub: sub, N: b.Letters}
	}
	return Backlog{Sub: sub, N: b.Entries, EntriesOnly: true}
}

// statsByTopic is statsOf of every topic of a broker-stats/topics answer.
func statsByTopic(raw map[string]adminapi.TopicStats) map[string]Stats {
	out := make(map[string]Stats, len(raw))
	for name, ts := range raw {
		out[name] = statsOf(ts)
	}
	return out
}
