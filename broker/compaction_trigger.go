package broker

import (
	"fmt"
	"strconv"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
)

// Automatic compaction, as upstream's PersistentTopic.checkCompaction: every
// brokerServiceCompactionMonitorIntervalInSeconds, each open persistent topic whose
// compactionThreshold (topic policy, else namespace policy, else
// brokerServiceCompactionThresholdInBytes; admin_policies.go) is set is compacted when the
// backlog of its __compaction subscription is over it; a topic never compacted counts its
// whole size, or, once it has durable subscriptions, its estimated backlog size.

// defaultCompactionMonitorInterval is upstream's brokerServiceCompactionMonitorIntervalInSeconds.
const defaultCompactionMonitorInterval = 60 * time.Second

func init() {
	confKeys["brokerServiceCompactionMonitorIntervalInSeconds"] = func(cfg *Config, _ *confState, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%q is not a number of seconds of at least 1", v)
		}
		cfg.CompactionMonitorInterval = time.Duration(n) * time.Second
		return nil
	}
}

// compactionMonitor checks every topic's compaction threshold until the broker stops.
func (b *Broker) compactionMonitor() {
	defer b.wg.Done()
	every := b.cfg.CompactionMonitorInterval
	if every <= 0 {
		every = defaultCompactionMonitorInterval
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-tick.C:
			b.guard("checking compaction thresholds", b.checkCompactions)
		}
	}
}

// checkCompactions starts a compaction of every open persistent topic over its threshold.
func (b *Broker) checkCompactions() {
	for t := range b.topics.sweep() {
		if !t.name.Persistent {
			continue
		}
		threshold := b.layers(t.name).CompactionThreshold()
		if threshold <= 0 {
			continue
		}
		var due bool
		t.locked(func() {
			due = !t.closed && t.compactionOf().status != compactionRunning && t.compactionBacklog() > threshold
		})
		if !due {
			continue
		}
		if err := t.startCompaction(); err != nil && !isKind(err, ErrConflict) {
			b.log.Warn("automatic compaction did not start", "topic", t.full, "err", err)
		}
	}
}

// compactionBacklog is upstream's backlog estimate for checkCompaction. Called with t.mu held.
func (t *topic) compactionBacklog() int64 {
	if sub := t.subs[compactionSubscription]; sub != nil {
		return t.sizeAfter(sub.markDelete)
	}
	for _, s := range t.subs {
		if s.durable {
			return t.estimatedBacklogSize()
		}
	}
	return t.log.Size()
}

// sizeAfter estimates the bytes stored after p, as upstream's
// getEstimatedSizeSinceMarkDeletePosition: ledgers after p's whole, the rest of p's ledger from
// its average entry size. Called with t.mu held.
func (t *topic) sizeAfter(p storage.Position) int64 {
	var size int64
	for _, l := range t.log.Ledgers() {
		switch {
		case l.ID > p.Ledger:
			size += l.Size
		case l.ID == p.Ledger && l.Entries > 0:
			after := min(l.First+l.Entries-1-p.Entry, l.Entries)
			if after > 0 {
				size += l.Size * after / l.Entries
			}
		}
	}
	return size
}
