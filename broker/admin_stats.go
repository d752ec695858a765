package broker

import (
	"math"
	"sort"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
)

// Stats, as upstream's …/stats, …/partitioned-stats, …/internalStats and
// /admin/v2/broker-stats/topics, with upstream's JSON field names. Counters are exact; rates
// are per second over a sliding window of rateWindow, from samples the sampler takes every
// rateTick (started with the first stats request). Backlogs count entries, as upstream.
// Not tracked (always 0): chunked message rates.

const (
	rateTick   = time.Second
	rateWindow = 5 * time.Second
)

// StatsOptions are upstream's stats query parameters.
type StatsOptions struct {
	GetPreciseBacklog        bool
	SubscriptionBacklogSize  bool
	GetEarliestTimeInBacklog bool
	ExcludePublishers        bool
	ExcludeConsumers         bool
}

// TopicStats is upstream's TopicStats JSON.
type TopicStats struct {
	MsgRateIn              float64                       `json:"msgRateIn"`
	MsgThroughputIn        float64                       `json:"msgThroughputIn"`
	MsgRateOut             float64                       `json:"msgRateOut"`
	MsgThroughputOut       float64                       `json:"msgThroughputOut"`
	BytesInCounter         int64                         `json:"bytesInCounter"`
	MsgInCounter           int64                         `json:"msgInCounter"`
	BytesOutCounter        int64                         `json:"bytesOutCounter"`
	MsgOutCounter          int64                         `json:"msgOutCounter"`
	AverageMsgSize         float64                       `json:"averageMsgSize"`
	MsgChunkPublished      bool                          `json:"msgChunkPublished"`
	StorageSize            int64                         `json:"storageSize"`
	BacklogSize            int64                         `json:"backlogSize"`
	EarliestMsgPublishTime int64                         `json:"earliestMsgPublishTimeInBacklogs"`
	Publishers             []PublisherStats              `json:"publishers"`
	WaitingPublishers      int                           `json:"waitingPublishers"`
	Subscriptions          map[string]*SubscriptionStats `json:"subscriptions"`
	Replication            map[string]any                `json:"replication"`
	DeduplicationStatus    string                        `json:"deduplicationStatus"`
	NonContiguousDeleted   int                           `json:"nonContiguousDeletedMessagesRanges"`
	TopicCreationTimeStamp int64                         `json:"topicCreationTimeStamp"`
	LastPublishTimeStamp   int64                         `json:"lastPublishTimeStamp"`
	// LastPublishTimestamp is the same, under the spelling pulsaradmin reads.
	LastPublishTimestamp int64 `json:"lastPublishTimestamp"`
}

// PublisherStats is upstream's PublisherStats JSON.
type PublisherStats struct {
	AccessMode              string            `json:"accessMode"`
	ProducerID              uint64            `json:"producerId"`
	ProducerName            string            `json:"producerName"`
	MsgRateIn               float64           `json:"msgRateIn"`
	MsgThroughputIn         float64           `json:"msgThroughputIn"`
	AverageMsgSize          float64           `json:"averageMsgSize"`
	ChunkedMessageRate      float64           `json:"chunkedMessageRate"`
	SupportsPartialProducer bool              `json:"supportsPartialProducer"`
	Address                 string            `json:"address"`
	ConnectedSince          string            `json:"connectedSince"`
	ClientVersion           string            `json:"clientVersion"`
	Metadata                map[string]string `json:"metadata"`
}

// SubscriptionStats is upstream's SubscriptionStats JSON.
type SubscriptionStats struct {
	MsgRateOut                       float64           `json:"msgRateOut"`
	MsgThroughputOut                 float64           `json:"msgThroughputOut"`
	BytesOutCounter                  int64             `json:"bytesOutCounter"`
	MsgOutCounter                    int64             `json:"msgOutCounter"`
	MsgRateRedeliver                 float64           `json:"msgRateRedeliver"`
	MessageAckRate                   float64           `json:"messageAckRate"`
	ChunkedMessageRate               float64           `json:"chunkedMessageRate"`
	MsgBacklog                       int64             `json:"msgBacklog"`
	BacklogSize                      int64             `json:"backlogSize"`
	EarliestMsgPublishTimeInBacklog  int64             `json:"earliestMsgPublishTimeInBacklog"`
	MsgBacklogNoDelayed              int64             `json:"msgBacklogNoDelayed"`
	BlockedSubscriptionOnUnackedMsgs bool              `json:"blockedSubscriptionOnUnackedMsgs"`
	MsgDelayed                       int64             `json:"msgDelayed"`
	UnackedMessages                  int64             `json:"unackedMessages"`
	Type                             string            `json:"type"`
	ActiveConsumerName               string            `json:"activeConsumerName,omitempty"`
	MsgRateExpired                   float64           `json:"msgRateExpired"`
	TotalMsgExpired                  int64             `json:"totalMsgExpired"`
	LastExpireTimestamp              int64             `json:"lastExpireTimestamp"`
	LastConsumedFlowTimestamp        int64             `json:"lastConsumedFlowTimestamp"`
	LastConsumedTimestamp            int64             `json:"lastConsumedTimestamp"`
	LastAckedTimestamp               int64             `json:"lastAckedTimestamp"`
	LastMarkDeleteAdvancedTimestamp  int64             `json:"lastMarkDeleteAdvancedTimestamp"`
	Consumers                        []ConsumerStats   `json:"consumers"`
	IsDurable                        bool              `json:"isDurable"`
	IsReplicated                     bool              `json:"isReplicated"`
	AllowOutOfOrderDelivery          bool              `json:"allowOutOfOrderDelivery"`
	ConsumersAfterMarkDeletePosition map[string]string `json:"consumersAfterMarkDeletePosition"`
	NonContiguousDeletedRanges       int               `json:"nonContiguousDeletedMessagesRanges"`
	NonContiguousDeletedRangesSize   int               `json:"nonContiguousDeletedMessagesRangesSerializedSize"`
	DelayedMessageIndexSizeInBytes   int64             `json:"delayedMessageIndexSizeInBytes"`
	SubscriptionProperties           map[string]string `json:"subscriptionProperties"`
	FilterProcessedMsgCount          int64             `json:"filterProcessedMsgCount"`
	FilterAcceptedMsgCount           int64             `json:"filterAcceptedMsgCount"`
	FilterRejectedMsgCount           int64             `json:"filterRejectedMsgCount"`
	FilterRescheduledMsgCount        int64             `json:"filterRescheduledMsgCount"`
}

// ConsumerStats is upstream's ConsumerStats JSON plus our extension schemaType (left out in
// upstream-compat mode).
type ConsumerStats struct {
	ConsumerName                 string            `json:"consumerName"`
	MsgRateOut                   float64           `json:"msgRateOut"`
	MsgThroughputOut             float64           `json:"msgThroughputOut"`
	BytesOutCounter              int64             `json:"bytesOutCounter"`
	MsgOutCounter                int64             `json:"msgOutCounter"`
	MsgRateRedeliver             float64           `json:"msgRateRedeliver"`
	MessageAckRate               float64           `json:"messageAckRate"`
	ChunkedMessageRate           float64           `json:"chunkedMessageRate"`
	AvailablePermits             int64             `json:"availablePermits"`
	UnackedMessages              int64             `json:"unackedMessages"`
	AvgMessagesPerEntry          int               `json:"avgMessagesPerEntry"`
	BlockedConsumerOnUnackedMsgs bool              `json:"blockedConsumerOnUnackedMsgs"`
	LastAckedTimestamp           int64             `json:"lastAckedTimestamp"`
	LastConsumedTimestamp        int64             `json:"lastConsumedTimestamp"`
	LastConsumedFlowTimestamp    int64             `json:"lastConsumedFlowTimestamp"`
	Address                      string            `json:"address"`
	ConnectedSince               string            `json:"connectedSince"`
	ClientVersion                string            `json:"clientVersion"`
	Metadata                     map[string]string `json:"metadata"`
	SchemaType                   string            `json:"schemaType,omitempty"`
	// A Key_Shared consumer's hash ranges (keyshared.go), in upstream 4's form and in its
	// classic form ("[start, end]"; 3.x brokers report only this one).
	KeyHashRangeArrays [][2]int32 `json:"keyHashRangeArrays,omitempty"`
	KeyHashRanges      []string   `json:"keyHashRanges,omitempty"`
}

// PartitionedTopicStats is upstream's PartitionedTopicStats JSON: the aggregate of the
// partitions, their count, and each partition's stats when asked.
type PartitionedTopicStats struct {
	TopicStats
	Metadata   PartitionedMetadataJSON `json:"metadata"`
	Partitions map[string]*TopicStats  `json:"partitions"`
}

// PartitionedMetadataJSON is upstream's {"partitions": N}.
type PartitionedMetadataJSON struct {
	Partitions int `json:"partitions"`
}

// rateSamples holds, per counted object (a *topic, *subscription, *consumer or *producer),
// its counters at each of the last few ticks.
type rateSamples map[any][]counterSample

type counterSample struct {
	at   time.Time
	vals counters
}

// counters are the cumulative values rates are derived from.
type counters struct{ msgs, bytes, redeliver, acks, expired int64 }

// rates returns per-second rates of cur against the oldest sample in the window.
func (b *Broker) rates(key any, cur counters, now time.Time) (msgs, bytes, redeliver float64) {
	r := b.rateOf(key, cur, now)
	return r.msgs, r.bytes, r.redeliver
}

type rateSet struct{ msgs, bytes, redeliver, acks, expired float64 }

func (b *Broker) rateOf(key any, cur counters, now time.Time) rateSet {
	a, unlock := b.adminLocked()
	defer unlock()
	ss := a.rates[key]
	if len(ss) == 0 {
		return rateSet{}
	}
	old := ss[0]
	secs := now.Sub(old.at).Seconds()
	if secs < 0.1 {
		return rateSet{}
	}
	per := func(c, o int64) float64 { return float64(c-o) / secs }
	return rateSet{
		msgs: per(cur.msgs, old.vals.msgs), bytes: per(cur.bytes, old.vals.bytes),
		redeliver: per(cur.redeliver, old.vals.redeliver), acks: per(cur.acks, old.vals.acks),
		expired: per(cur.expired, old.vals.expired),
	}
}

// startSampler starts the rate sampler once; it stops with the broker.
func (b *Broker) startSampler() {
	b.admin.samplerOnce.Do(func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.closed {
			return
		}
		// Added under b.mu while not closed, so before Close waits on b.wg.
		b.wg.Add(1)
		go b.sampleLoop()
	})
}

func (b *Broker) sampleLoop() {
	defer b.wg.Done()
	tick := time.NewTicker(rateTick)
	defer tick.Stop()
	b.sample(time.Now())
	for {
		select {
		case <-b.stop:
			return
		case now := <-tick.C:
			b.guard("sampling rates", func() { b.sample(now) })
		}
	}
}

// sample records every counted object's counters, dropping samples older than the window and
// objects that are gone.
func (b *Broker) sample(now time.Time) {
	cur := map[any]counters{}
	for _, t := range b.topics.all() {
		t.mu.Lock()
		cur[t] = counters{msgs: t.stats.msgIn, bytes: t.stats.bytesIn}
		cur[outKey{t}] = counters{msgs: t.stats.msgOut, bytes: t.stats.bytesOut}
		for p := range t.producers {
			cur[p] = counters{msgs: p.msgIn, bytes: p.bytesIn}
		}
		for _, s := range t.subs {
			cur[s] = s.counters()
			for _, cs := range s.consumers {
				cur[cs] = cs.counters()
			}
		}
		t.mu.Unlock()
	}
	a, unlock := b.adminLocked()
	defer unlock()
	next := make(rateSamples, len(cur))
	for k, v := range cur {
		ss := a.rates[k]
		for len(ss) > 0 && now.Sub(ss[0].at) > rateWindow {
			ss = ss[1:]
		}
		next[k] = append(ss, counterSample{at: now, vals: v})
	}
	a.rates = next
}

// outKey distinguishes a topic's outbound counters from its inbound ones.
type outKey struct{ t *topic }

// TopicStats returns the stats of a non-partitioned topic or of one partition.
func (b *Broker) TopicStats(tname string, opts StatsOptions) (*TopicStats, error) {
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

func (b *Broker) topicStats(t *topic, opts StatsOptions, now time.Time) *TopicStats {
	dedup := "Disabled"
	if p, err := b.NamespacePolicies(t.name.namespace()); err == nil && p.DeduplicationEnabled != nil && *p.DeduplicationEnabled {
		dedup = "Enabled"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	st := &TopicStats{
		MsgInCounter:           t.stats.msgIn,
		BytesInCounter:         t.stats.bytesIn,
		MsgOutCounter:          t.stats.msgOut,
		BytesOutCounter:        t.stats.bytesOut,
		StorageSize:            t.log.Size(),
		Publishers:             []PublisherStats{},
		WaitingPublishers:      len(t.waiting),
		Subscriptions:          map[string]*SubscriptionStats{},
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
			ps := PublisherStats{
				AccessMode:     accessModeName(p.mode.String()),
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

// estimatedBacklogSize is upstream's estimatedBacklogSize: the bytes stored after the slowest
// subscription's mark-delete position (0 without subscriptions). As upstream it counts the
// ledgers after that position's ledger whole and estimates the rest of its ledger from the
// ledger's average entry size. Called with t.mu held.
func (t *topic) estimatedBacklogSize() int64 {
	if len(t.subs) == 0 {
		return 0
	}
	var slowest storage.Position
	first := true
	for _, s := range t.subs {
		if first || s.markDelete.Less(slowest) {
			slowest, first = s.markDelete, false
		}
	}
	return t.sizeAfter(slowest) // compaction_trigger.go
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

// accessModeName turns the protocol's access mode into upstream's stats spelling.
func accessModeName(s string) string { return s }

// subscriptionStats is s's stats. Called with the topic's mutex held.
func (b *Broker) subscriptionStats(s *subscription, opts StatsOptions, now time.Time) *SubscriptionStats {
	ss := &SubscriptionStats{
		MsgOutCounter:                    s.msgOut,
		BytesOutCounter:                  s.bytesOut,
		MsgBacklog:                       s.backlogEntries(),
		MsgDelayed:                       int64(len(s.delayed)),
		Type:                             s.subType.String(),
		LastConsumedTimestamp:            millis(s.lastConsumed),
		LastAckedTimestamp:               millis(s.lastAck),
		Consumers:                        []ConsumerStats{},
		IsDurable:                        s.durable,
		ConsumersAfterMarkDeletePosition: map[string]string{},
		NonContiguousDeletedRanges:       len(ackedRanges(s)),
		SubscriptionProperties:           nonNil(s.props),
	}
	ss.MsgBacklogNoDelayed = max(ss.MsgBacklog-ss.MsgDelayed, 0)
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
		c := ConsumerStats{
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
		limit := int64(b.cfg.MaxUnackedMessagesPerConsumer)
		c.BlockedConsumerOnUnackedMsgs = s.shared() && limit > 0 && cs.unacked >= limit
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

// scanBacklog calls fn for every unacknowledged entry after the mark-delete position. Called
// with the topic's mutex held.
func (s *subscription) scanBacklog(fn func(storage.Entry)) {
	from := s.topic.log.Next(s.markDelete)
	for {
		entries, err := s.topic.log.Read(from, 256)
		if err != nil || len(entries) == 0 {
			return
		}
		for _, e := range entries {
			if !s.isAcked(e.Pos) {
				fn(e)
			}
			from = s.topic.log.Next(e.Pos)
		}
	}
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
func (b *Broker) PartitionedTopicStats(tname string, perPartition bool, opts StatsOptions) (*PartitionedTopicStats, error) {
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
	out := &PartitionedTopicStats{
		TopicStats: TopicStats{
			Publishers:          []PublisherStats{},
			Subscriptions:       map[string]*SubscriptionStats{},
			Replication:         map[string]any{},
			DeduplicationStatus: "Disabled",
		},
		Metadata:   PartitionedMetadataJSON{Partitions: n},
		Partitions: map[string]*TopicStats{},
	}
	agg := &out.TopicStats
	for i := range n {
		t, err := b.topicFor(name.partition(i), "")
		if err != nil {
			continue // deleted meanwhile
		}
		ps := b.topicStats(t, opts, now)
		if perPartition {
			out.Partitions[t.full] = ps
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
			a := agg.Subscriptions[sn]
			if a == nil {
				c := *ss
				c.Consumers = append([]ConsumerStats{}, ss.Consumers...)
				agg.Subscriptions[sn] = &c
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
			a.MsgBacklogNoDelayed += ss.MsgBacklogNoDelayed
			a.MsgDelayed += ss.MsgDelayed
			a.BacklogSize += ss.BacklogSize
			a.UnackedMessages += ss.UnackedMessages
			a.Consumers = append(a.Consumers, ss.Consumers...)
			a.LastConsumedTimestamp = max(a.LastConsumedTimestamp, ss.LastConsumedTimestamp)
			a.LastAckedTimestamp = max(a.LastAckedTimestamp, ss.LastAckedTimestamp)
			a.LastConsumedFlowTimestamp = max(a.LastConsumedFlowTimestamp, ss.LastConsumedFlowTimestamp)
		}
	}
	agg.AverageMsgSize = avg(agg.MsgThroughputIn, agg.MsgRateIn)
	return out, nil
}

// BrokerTopicStats returns every live topic's stats as upstream's broker-stats/topics
// groups them: namespace → bundle → "persistent"/"non-persistent" → topic → stats.
func (b *Broker) BrokerTopicStats() map[string]map[string]map[string]map[string]*TopicStats {
	b.startSampler()
	now := time.Now()
	out := map[string]map[string]map[string]map[string]*TopicStats{}
	for _, t := range b.topics.all() {
		ns := t.name.namespace()
		if out[ns] == nil {
			out[ns] = map[string]map[string]map[string]*TopicStats{bundleRange: {}}
		}
		d := out[ns][bundleRange][t.name.domain()]
		if d == nil {
			d = map[string]*TopicStats{}
			out[ns][bundleRange][t.name.domain()] = d
		}
		d[t.full] = b.topicStats(t, StatsOptions{}, now)
	}
	return out
}

// bundleRange is the one bundle of every namespace on a single broker.
const bundleRange = "0x00000000_0xffffffff"

// InternalStats is upstream's PersistentTopicInternalStats JSON.
type InternalStats struct {
	EntriesAddedCounter                int64                   `json:"entriesAddedCounter"`
	NumberOfEntries                    int64                   `json:"numberOfEntries"`
	TotalSize                          int64                   `json:"totalSize"`
	CurrentLedgerEntries               int64                   `json:"currentLedgerEntries"`
	CurrentLedgerSize                  int64                   `json:"currentLedgerSize"`
	LastLedgerCreatedTimestamp         string                  `json:"lastLedgerCreatedTimestamp"`
	LastLedgerCreationFailureTimestamp string                  `json:"lastLedgerCreationFailureTimestamp,omitempty"`
	WaitingCursorsCount                int                     `json:"waitingCursorsCount"`
	PendingAddEntriesCount             int                     `json:"pendingAddEntriesCount"`
	LastConfirmedEntry                 string                  `json:"lastConfirmedEntry"`
	State                              string                  `json:"state"`
	Ledgers                            []InternalLedgerInfo    `json:"ledgers"`
	Cursors                            map[string]*CursorStats `json:"cursors"`
	SchemaLedgers                      []InternalLedgerInfo    `json:"schemaLedgers"`
	CompactedLedger                    InternalLedgerInfo      `json:"compactedLedger"`
}

// InternalLedgerInfo is upstream's LedgerInfo JSON.
type InternalLedgerInfo struct {
	LedgerID        int64  `json:"ledgerId"`
	Entries         int64  `json:"entries"`
	Size            int64  `json:"size"`
	Timestamp       int64  `json:"timestamp,omitempty"`
	Offloaded       bool   `json:"offloaded"`
	Metadata        string `json:"metadata,omitempty"`
	UnderReplicated bool   `json:"underReplicated"`
}

// CursorStats is upstream's CursorStats JSON.
type CursorStats struct {
	MarkDeletePosition                       string           `json:"markDeletePosition"`
	ReadPosition                             string           `json:"readPosition"`
	WaitingReadOp                            bool             `json:"waitingReadOp"`
	PendingReadOps                           int              `json:"pendingReadOps"`
	MessagesConsumedCounter                  int64            `json:"messagesConsumedCounter"`
	CursorLedger                             int64            `json:"cursorLedger"`
	CursorLedgerLastEntry                    int64            `json:"cursorLedgerLastEntry"`
	IndividuallyDeletedMessages              string           `json:"individuallyDeletedMessages"`
	LastLedgerSwitchTimestamp                string           `json:"lastLedgerSwitchTimestamp"`
	State                                    string           `json:"state"`
	Active                                   bool             `json:"active"`
	NumberOfEntriesSinceFirstNotAckedMessage int64            `json:"numberOfEntriesSinceFirstNotAckedMessage"`
	TotalNonContiguousDeletedMessagesRange   int              `json:"totalNonContiguousDeletedMessagesRange"`
	SubscriptionHavePendingRead              bool             `json:"subscriptionHavePendingRead"`
	Properties                               map[string]int64 `json:"properties"`
}

// InternalStats returns a topic's (or partition's) storage-level stats: its ledgers (segments)
// and one cursor per durable subscription.
func (b *Broker) InternalStats(tname string) (*InternalStats, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return nil, err
	}
	t, err := b.topicFor(name, "Internal stats")
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.internalStats(), nil
}

// internalStats is t's PersistentTopicInternalStats. Called with t.mu held.
//
// Ledgers are our segments (the in-memory log's one ledger). As upstream, the open ledger is
// listed with 0 entries and size 0 (its figures are currentLedgerEntries and
// currentLedgerSize); a closed ledger's entries count every id it handed out, trimmed ones
// included, and its timestamp is its last entry's publish time (upstream's is when it closed,
// which a segment does not record). Cursors are the subscriptions; they live in the metadata
// store, not in a cursor ledger, so cursorLedger is −1.
func (t *topic) internalStats() *InternalStats {
	last := t.log.Last()
	ledgers := []InternalLedgerInfo{}
	var added int64
	infos := t.log.Ledgers()
	for i, l := range infos {
		n := l.First + l.Entries
		added += n
		li := InternalLedgerInfo{LedgerID: l.ID, Entries: n, Size: l.Size}
		if i == len(infos)-1 {
			li.Entries, li.Size = 0, 0
		} else if e, ok := t.log.GetHeld(storage.Position{Ledger: l.ID, Entry: n - 1}); ok {
			li.Timestamp = e.Meta.PublishTime
			releaseHold(e.Hold)
		}
		ledgers = append(ledgers, li)
	}
	var current storage.LedgerInfo
	if len(infos) > 0 {
		current = infos[len(infos)-1]
	}
	state := "LedgerOpened"
	if t.b.isTerminated(t.full) {
		state = "Terminated"
	}
	st := &InternalStats{
		EntriesAddedCounter:        added,
		NumberOfEntries:            t.log.Entries(),
		TotalSize:                  t.log.Size(),
		CurrentLedgerEntries:       current.First + current.Entries,
		CurrentLedgerSize:          current.Size,
		LastLedgerCreatedTimestamp: t.opened.UTC().Format(time.RFC3339Nano),
		LastConfirmedEntry:         last.String(),
		State:                      state,
		Ledgers:                    ledgers,
		Cursors:                    map[string]*CursorStats{},
		SchemaLedgers:              []InternalLedgerInfo{},
		CompactedLedger:            t.compactedLedgerInfo(),
	}
	for name, s := range t.subs {
		st.Cursors[name] = s.cursorStats(added, last)
	}
	return st
}

// cursorStats is s's CursorStats; added is the topic's entriesAddedCounter. Called with the
// topic's mutex held.
func (s *subscription) cursorStats(added int64, last storage.Position) *CursorStats {
	log := s.topic.log
	ranges := ackedRanges(s)
	parts := make([]string, len(ranges))
	for i, r := range ranges {
		// Upstream shows open-closed ranges: (before-first..last].
		parts[i] = "(" + storage.Position{Ledger: r[0].Ledger, Entry: r[0].Entry - 1}.String() + ".." + r[1].String() + "]"
	}
	// Upstream counts (mark-delete, read position], the read position included even when it
	// is not written yet: a cursor that has caught up shows 1.
	var sinceFirst int64
	if s.markDelete.Less(s.readPos) {
		sinceFirst = log.EntriesFrom(log.Next(s.markDelete)) - log.EntriesFrom(s.readPos) + 1
	}
	state := "Open"
	if len(s.consumers) == 0 && !s.durable {
		state = "Closed"
	}
	return &CursorStats{
		MarkDeletePosition: s.markDelete.String(),
		ReadPosition:       s.readPos.String(),
		WaitingReadOp:      len(s.consumers) > 0 && last.Less(s.readPos),
		// Upstream's counter is what makes entriesAddedCounter − messagesConsumedCounter the
		// cursor's backlog.
		MessagesConsumedCounter:                  added - s.backlogEntries(),
		CursorLedger:                             -1,
		CursorLedgerLastEntry:                    -1,
		IndividuallyDeletedMessages:              "[" + strings.Join(parts, ", ") + "]",
		LastLedgerSwitchTimestamp:                s.created.UTC().Format(time.RFC3339Nano),
		State:                                    state,
		Active:                                   len(s.consumers) > 0,
		NumberOfEntriesSinceFirstNotAckedMessage: sinceFirst,
		TotalNonContiguousDeletedMessagesRange:   len(ranges),
		Properties:                               map[string]int64{},
	}
}

// ConnectionCount is the number of open client connections.
func (b *Broker) ConnectionCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.conns)
}
