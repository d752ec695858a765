package data

import "github.com/letterbox-dev/letterbox/client/admin"

// statsOf is what the screens show of a topic's stats (client/admin's, as upstream's
// TopicStats spells them).
func statsOf(ts admin.TopicStats) Stats {
	s := Stats{RateIn: ts.MsgRateIn, RateOut: ts.MsgRateOut, ThroughputIn: ts.MsgThroughputIn,
		ThroughputOut: ts.MsgThroughputOut, InCounter: ts.MsgInCounter, Storage: ts.StorageSize, BacklogSize: ts.BacklogSize,
		Subscriptions: len(ts.Subscriptions), Producers: len(ts.Publishers)}
	for _, sub := range ts.Subscriptions {
		s.Backlog += sub.MsgBacklog
		s.Consumers += len(sub.Consumers)
	}
	return s
}

// statsByTopic is statsOf of every topic of a broker-stats/topics answer.
func statsByTopic(raw map[string]admin.TopicStats) map[string]Stats {
	out := make(map[string]Stats, len(raw))
	for name, ts := range raw {
		out[name] = statsOf(ts)
	}
	return out
}
