package broker

import (
	"math"
	"sort"
	"time"

	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/broker/storage"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Stats, as upstream's …/stats, …/partitioned-stats, …/internalStats and
// /admin/v2/broker-stats/topics, with upstream's JSON field names. Counters are exact; rates
// are per second over a sliding window of rateWindow, from samples the sampler takes every
// rateTick (started with the first stats request). Backlogs count entries, as upstream;
// msgBacklogMessages, our extension, counts messages.
// Not tracked (always 0): chunked message rates.

// StatsOptions are upstream's stats query parameters.
type StatsOptions struct {
	GetPreciseBacklog        bool
	SubscriptionBacklogSize  bool
	GetEarliestTimeInBacklog bool
	ExcludePublishers        bool
	ExcludeConsumers         bool
}

// TopicStats returns the stats of a non-partitioned topic or of one partition.
func (b *Broker) TopicStats(tname string, opts StatsOptions) (*adminapi.TopicStats, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return nil, err
	}
	t, err := b.topicFor(name, "Stats")
	if err != nil {
		if isKind(err, ErrNotAllowed) {
			return nil, adminErr(ErrNotFound, "Topic not found: %s is a partitioned topic, ask for its partitioned-stats", name)
		}
		return nil, err
	}
	b.startSampler()
	return b.topicStats(t, opts, time.Now()), nil
}

func (b *Broker) topicStats(t *topic, opts StatsOptions, now time.Time) *adminapi.TopicStats {
	// The deduplication in effect, as upstream's status says: the topic's policy, else its
	// namespace's, else brokerDeduplicationEnabled (a namespace's alone left a broker that
	// deduplicates everywhere saying Disabled, and replays at least once).
	dedup := "Disabled"
	if t.name.Persistent && b.layers(t.name).Deduplication() {
		dedup = "Enabled"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	st := &adminapi.TopicStats{
		MsgInCounter:           t.stats.msgIn,
		BytesInCounter:         t.stats.bytesIn,
		MsgOutCounter:          t.stats.msgOut,
		BytesOutCounter:        t.stats.bytesOut,
		StorageSize:            t.log.Size(),
		Publishers:             []adminapi.PublisherStats{},
		WaitingPublishers:      len(t.waiting),
		Subscriptions:          map[string]adminapi.SubscriptionStats{},
		Replication:            map[string]any{},
		DeduplicationStatus:    dedup,
		TopicCreationTimeStamp: millis(t.created),
		LastPublishTimeStamp:   millis(t.stats.lastPublish),
		LastPublishTimestamp:   millis(t.stats.lastPublish),
	}
	st.MsgRateIn, st.MsgThroughputIn, _ = b.rates(t, counters{msgs: t.stats.msgIn, bytes: t.stats.bytesIn}, now)
	st.MsgRateOut, st.MsgThroughputOut, _ = b.rates(outKey{t}, counters{msgs: t.stats.msgOut, bytes: t.stats.bytesOut}, now)
	st.AverageMsgSize = avg(st.MsgThroughputIn, st.MsgRateIn)
	if !opts.ExcludePublishers {
		for p := range t.producers {
			ps := adminapi.PublisherStats{
				AccessMode:     p.mode.String(),
				ProducerID:     p.id,
				ProducerName:   p.name,
				Address:        p.conn.remote,
				ConnectedSince: p.since.UTC().Format(time.RFC3339Nano),
				ClientVersion:  p.conn.clientVersion,
				Metadata:       nonNil(p.metadata),
			}
			ps.MsgRateIn, ps.MsgThroughputIn, _ = b.rates(p, counters{msgs: p.msgIn, bytes: p.bytesIn}, now)
			ps.AverageMsgSize = avg(ps.MsgThroughputIn, ps.MsgRateIn)
			st.Publishers = append(st.Publishers, ps)
		}
		sort.Slice(st.Publishers, func(i, j int) bool { return st.Publishers[i].ProducerName < st.Publishers[j].ProducerName })
	}
	st.BacklogSize = t.estimatedBacklogSize()
	for name, s := range t.subs {
		st.Subscriptions[name] = b.subscriptionStats(s, opts, now)
	}
	return st
}

func avg(bytes, msgs float64) float64 {
	if msgs <= 0 {
		return 0
	}
	return bytes / msgs
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// subscriptionStats is s's stats. Called with the topic's mutex held.
func (b *Broker) subscriptionStats(s *subscription, opts StatsOptions, now time.Time) adminapi.SubscriptionStats {
	ss := adminapi.SubscriptionStats{
		MsgOutCounter:                    s.msgOut,
		BytesOutCounter:                  s.bytesOut,
		MsgBacklog:                       s.backlogEntries(),
		MsgDelayed:                       int64(len(s.delayed)),
		Type:                             s.subType.String(),
		BlockedSubscriptionOnUnackedMsgs: s.unackedBlocked(), // unacked.go
		LastConsumedTimestamp:            millis(s.lastConsumed),
		LastAckedTimestamp:               millis(s.lastAck),
		Consumers:                        []adminapi.ConsumerStats{},
		IsDurable:                        s.durable,
		ConsumersAfterMarkDeletePosition: map[string]string{},
		NonContiguousDeletedRanges:       len(ackedRanges(s)),
		SubscriptionProperties:           nonNil(s.props),
	}
	ss.MsgBacklogNoDelayed = max(ss.MsgBacklog-ss.MsgDelayed, 0)
	if !b.cfg.CompatUpstream {
		n := s.backlogMessages()
		ss.MsgBacklogMessages = &n
	}
	r := b.rateOf(s, s.counters(), now)
	ss.MsgRateOut, ss.MsgThroughputOut, ss.MsgRateRedeliver = r.msgs, r.bytes, r.redeliver
	ss.MessageAckRate, ss.MsgRateExpired = r.acks, r.expired
	ss.TotalMsgExpired, ss.LastExpireTimestamp = s.msgExpired, millis(s.lastExpire)
	if s.active != nil {
		ss.ActiveConsumerName = s.active.name
	}
	if opts.SubscriptionBacklogSize || opts.GetEarliestTimeInBacklog {
		s.scanBacklog(func(e storage.Entry) {
			ss.BacklogSize += int64(len(e.Data))
			if ss.EarliestMsgPublishTimeInBacklog == 0 {
				ss.EarliestMsgPublishTimeInBacklog = e.Meta.PublishTime
			}
		})
	}
	for _, cs := range s.consumers {
		ss.UnackedMessages += max(cs.unacked, 0)
		if t := millis(cs.lastFlow); t > ss.LastConsumedFlowTimestamp {
			ss.LastConsumedFlowTimestamp = t
		}
		if opts.ExcludeConsumers {
			continue
		}
		c := adminapi.ConsumerStats{
			ConsumerName:              cs.name,
			AvgMessagesPerEntry:       int(math.Round(float64(cs.avgMsgsPerEntry))),
			MsgOutCounter:             cs.msgOut,
			BytesOutCounter:           cs.bytesOut,
			AvailablePermits:          cs.permits,
			UnackedMessages:           max(cs.unacked, 0),
			LastAckedTimestamp:        millis(cs.lastAck),
			LastConsumedTimestamp:     millis(cs.lastConsumed),
			LastConsumedFlowTimestamp: millis(cs.lastFlow),
			Address:                   cs.conn.remote,
			ConnectedSince:            cs.since.UTC().Format(time.RFC3339Nano),
			ClientVersion:             cs.conn.clientVersion,
			Metadata:                  nonNil(cs.metadata),
		}
		if s.selector != nil {
			c.KeyHashRangeArrays, c.KeyHashRanges = keyHashRanges(s.selector.rangesOf(cs))
		}
		c.BlockedConsumerOnUnackedMsgs = s.consumerBlocked(cs) // unacked.go
		r := b.rateOf(cs, cs.counters(), now)
		c.MsgRateOut, c.MsgThroughputOut, c.MsgRateRedeliver, c.MessageAckRate = r.msgs, r.bytes, r.redeliver, r.acks
		if !b.cfg.CompatUpstream {
			c.SchemaType = "BYTES"
			if cs.hasSchema {
				c.SchemaType = SchemaTypeName(cs.schemaType)
				if c.SchemaType == "NONE" {
					c.SchemaType = "BYTES"
				}
			}
		}
		ss.Consumers = append(ss.Consumers, c)
	}
	return ss
}

// ackedRanges returns the individually acknowledged entries after the mark-delete position as
// ranges of consecutive entries, sorted. Called with the topic's mutex held.
func ackedRanges(s *subscription) [][2]storage.Position {
	out := make([][2]storage.Position, 0, s.acked.ranges())
	s.acked.each(0, func(r entryRange) {
		out = append(out, [2]storage.Position{{Ledger: r.ledger, Entry: r.first}, {Ledger: r.ledger, Entry: r.last}})
	})
	return out
}

// PartitionedTopicStats returns a partitioned topic's aggregated stats, with each partition's
// when perPartition is set.
func (b *Broker) PartitionedTopicStats(tname string, perPartition bool, opts StatsOptions) (*adminapi.PartitionedTopicStats, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return nil, err
	}
	n, ok := b.partitionCount(name)
	if !ok {
		return nil, adminErr(ErrNotFound, "Partitioned Topic not found: %s is not a partitioned topic", name)
	}
	b.startSampler()
	now := time.Now()
	out := &adminapi.PartitionedTopicStats{
		TopicStats: adminapi.TopicStats{
			Publishers:          []adminapi.PublisherStats{},
			Subscriptions:       map[string]adminapi.SubscriptionStats{},
			Replication:         map[string]any{},
			DeduplicationStatus: "Disabled",
		},
		Metadata:   adminapi.PartitionedTopicMetadata{Partitions: n},
		Partitions: map[string]adminapi.TopicStats{},
	}
	agg := &out.TopicStats
	for i := range n {
		t, err := b.topicFor(name.PartitionTopic(i), "")
		if err != nil {
			continue // deleted meanwhile
		}
		ps := b.topicStats(t, opts, now)
		if perPartition {
			out.Partitions[t.full] = *ps
		}
		agg.DeduplicationStatus = ps.DeduplicationStatus
		agg.MsgRateIn += ps.MsgRateIn
		agg.MsgThroughputIn += ps.MsgThroughputIn
		agg.MsgRateOut += ps.MsgRateOut
		agg.MsgThroughputOut += ps.MsgThroughputOut
		agg.MsgInCounter += ps.MsgInCounter
		agg.BytesInCounter += ps.BytesInCounter
		agg.MsgOutCounter += ps.MsgOutCounter
		agg.BytesOutCounter += ps.BytesOutCounter
		agg.StorageSize += ps.StorageSize
		agg.BacklogSize += ps.BacklogSize
		agg.WaitingPublishers += ps.WaitingPublishers
		agg.Publishers = append(agg.Publishers, ps.Publishers...)
		if agg.TopicCreationTimeStamp == 0 || (ps.TopicCreationTimeStamp > 0 && ps.TopicCreationTimeStamp < agg.TopicCreationTimeStamp) {
			agg.TopicCreationTimeStamp = ps.TopicCreationTimeStamp
		}
		agg.LastPublishTimeStamp = max(agg.LastPublishTimeStamp, ps.LastPublishTimeStamp)
		agg.LastPublishTimestamp = agg.LastPublishTimeStamp
		for sn, ss := range ps.Subscriptions {
			a, ok := agg.Subscriptions[sn]
			if !ok {
				ss.Consumers = append([]adminapi.ConsumerStats{}, ss.Consumers...)
				agg.Subscriptions[sn] = ss
				continue
			}
			a.MsgRateOut += ss.MsgRateOut
			a.MsgThroughputOut += ss.MsgThroughputOut
			a.MsgRateRedeliver += ss.MsgRateRedeliver
			a.MsgRateExpired += ss.MsgRateExpired
			a.TotalMsgExpired += ss.TotalMsgExpired
			a.LastExpireTimestamp = max(a.LastExpireTimestamp, ss.LastExpireTimestamp)
			a.MsgOutCounter += ss.MsgOutCounter
			a.BytesOutCounter += ss.BytesOutCounter
			a.MsgBacklog += ss.MsgBacklog
			if a.MsgBacklogMessages != nil && ss.MsgBacklogMessages != nil {
				n := *a.MsgBacklogMessages + *ss.MsgBacklogMessages
				a.MsgBacklogMessages = &n
			}
			a.MsgBacklogNoDelayed += ss.MsgBacklogNoDelayed
			a.MsgDelayed += ss.MsgDelayed
			a.BacklogSize += ss.BacklogSize
			a.UnackedMessages += ss.UnackedMessages
			a.Consumers = append(a.Consumers, ss.Consumers...)
			a.LastConsumedTimestamp = max(a.LastConsumedTimestamp, ss.LastConsumedTimestamp)
			a.LastAckedTimestamp = max(a.LastAckedTimestamp, ss.LastAckedTimestamp)
			a.LastConsumedFlowTimestamp = max(a.LastConsumedFlowTimestamp, ss.LastConsumedFlowTimestamp)
			agg.Subscriptions[sn] = a
		}
	}
	agg.AverageMsgSize = avg(agg.MsgThroughputIn, agg.MsgRateIn)
	return out, nil
}

// BrokerTopicStats returns every live topic's stats as upstream's broker-stats/topics
// groups them: namespace → bundle → "persistent"/"non-persistent" → topic → stats.
func (b *Broker) BrokerTopicStats() map[string]map[string]map[string]map[string]*adminapi.TopicStats {
	b.startSampler()
	now := time.Now()
	out := map[string]map[string]map[string]map[string]*adminapi.TopicStats{}
	bundles := map[string]*adminapi.BundlesData{} // by namespace, read once
	for _, t := range b.topics.all() {
		ns := t.name.NamespaceName()
		nb, ok := bundles[ns]
		if !ok {
			nb = policy.DefaultBundles()
			if p := b.namespaceLayers(ns).Namespace; p != nil && p.Bundles != nil {
				nb = p.Bundles
			}
			bundles[ns] = nb
		}
		if out[ns] == nil {
			out[ns] = map[string]map[string]map[string]*adminapi.TopicStats{}
		}
		bundle := policy.BundleOf(nb, t.full)
		if out[ns][bundle] == nil {
			out[ns][bundle] = map[string]map[string]*adminapi.TopicStats{}
		}
		d := out[ns][bundle][t.name.Domain()]
		if d == nil {
			d = map[string]*adminapi.TopicStats{}
			out[ns][bundle][t.name.Domain()] = d
		}
		d[t.full] = b.topicStats(t, StatsOptions{}, now)
	}
	return out
}

// ConnectionCount is the number of open client connections.
func (b *Broker) ConnectionCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.conns)
}
