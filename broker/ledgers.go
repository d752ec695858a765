package broker

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/letterbox-dev/letterbox/broker/storage"
)

// Data lifetime, as upstream's managed ledger: a topic's log appends to an open ledger, which
// is closed when full and old enough, or too old (storage.Rollover, Config.Rollover), or when
// the topic is unloaded (unload.go); the log frees closed ledgers only, once no subscription
// needs them and retention lets them go (topic.trim, retention.go). So a subscription created
// from the earliest position reads everything of the open ledger, and a seek back to the
// earliest position replays it, acknowledged or not.
//
// Trimming runs after each dispatch round and, for topics that are idle, every
// RetentionCheckInterval (upstream's retentionCheckIntervalInSeconds), which also closes
// ledgers past their maximum age.
//
// In memory, ledgers are full at 2 MiB and closed without a minimum age unless broker.conf
// says otherwise (storage.MemoryStoreOptions), so what every subscription has acknowledged is
// freed a ledger behind the slowest one. An in-memory broker with a memory budget
// (Config.MemoryLimit) does not even wait for ledgers to close while its memory is more than
// half spent: it frees what every subscription has acknowledged at once, open ledger or not,
// on every topic, at most once a second. Without that the open ledgers of many topics (or,
// with upstream's minimum age configured, a steady stream's last ten minutes) would hold data
// nobody needs, and the budget, which counts memory where upstream's backlog quota counts the
// backlog, would hold producers back for it. Upstream has no such rule.

// A topic without subscriptions has nothing acknowledged, and upstream, whose ledgers stay open
// for their minimum age, keeps what it was sent for ten minutes at least: an application that
// produces first and subscribes from the earliest message later reads it all. In memory, with
// ledgers closed as soon as they are full, such a topic keeps the last
// managedLedgerMinLedgerRolloverTimeMinutes (10) of what it was sent instead (keepUnread),
// unless memory pressure frees it.

// pressureSweepEvery bounds how often memory pressure makes the broker trim every topic.
const pressureSweepEvery = time.Second

func init() {
	for k, v := range ledgerConfKeys {
		confKeys[k] = v
	}
}

// ledgerConfKeys are the broker.conf keys of ledger rollover and retention checks.
var ledgerConfKeys = map[string]confSetter{
	"managedLedgerMaxEntriesPerLedger": func(cfg *Config, _ *confState, v string) error {
		n, err := confInt(v, 1, math.MaxInt32)
		cfg.Rollover.MaxEntries = n
		return err
	},
	"managedLedgerMaxSizePerLedgerMbytes": func(cfg *Config, _ *confState, v string) error {
		n, err := confInt(v, 1, math.MaxInt32)
		cfg.Rollover.MaxBytes = n << 20
		return err
	},
	// 0 means no minimum, as upstream; storage.Rollover says so with a negative age.
	"managedLedgerMinLedgerRolloverTimeMinutes": func(cfg *Config, _ *confState, v string) error {
		n, err := confInt(v, 0, math.MaxInt32)
		cfg.Rollover.MinAge = time.Duration(n) * time.Minute
		if n == 0 {
			cfg.Rollover.MinAge = -1
		}
		return err
	},
	"managedLedgerMaxLedgerRolloverTimeMinutes": func(cfg *Config, _ *confState, v string) error {
		n, err := confInt(v, 1, math.MaxInt32)
		cfg.Rollover.MaxAge = time.Duration(n) * time.Minute
		return err
	},
	// −1: without limit, as upstream.
	"defaultRetentionTimeInMinutes": func(cfg *Config, _ *confState, v string) error {
		n, err := confInt(v, -1, math.MaxInt32)
		cfg.DefaultRetentionMinutes = int(n)
		return err
	},
	"defaultRetentionSizeInMB": func(cfg *Config, _ *confState, v string) error {
		n, err := confInt(v, -1, math.MaxInt32)
		cfg.DefaultRetentionSizeMB = n
		return err
	},
	"retentionCheckIntervalInSeconds": func(cfg *Config, _ *confState, v string) error {
		n, err := confInt(v, 1, math.MaxInt32)
		cfg.RetentionCheckInterval = time.Duration(n) * time.Second
		return err
	},
}

// confInt parses an integer from lo to hi.
func confInt(v string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", v)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%d: must be from %d to %d", n, lo, hi)
	}
	return n, nil
}

// retentionLoop trims every persistent topic every RetentionCheckInterval, and when memory
// pressure asks for it, until the broker stops.
func (b *Broker) retentionLoop() {
	defer b.wg.Done()
	tick := time.NewTicker(b.cfg.RetentionCheckInterval)
	defer tick.Stop()
	var last time.Time
	for {
		select {
		case <-b.stop:
			return
		case <-tick.C:
		case <-b.sweep:
			if time.Since(last) < pressureSweepEvery {
				continue
			}
		}
		last = time.Now()
		b.guard("checking retention", b.trimAll)
	}
}

// trimAll frees, on every persistent topic, what no subscription needs and retention lets go.
func (b *Broker) trimAll() {
	for t := range b.topics.sweep() {
		t.locked(func() { t.expireParked(time.Now()) }) // reader_seek.go
		if t.name.Persistent {
			t.locked(func() { t.trimLog(true) })
		}
	}
}

// memoryPressure reports whether the in-memory store has spent half its budget.
func (b *Broker) memoryPressure() bool {
	return b.meter != nil && b.meter.MemoryInUse() >= b.cfg.MemoryLimit/2
}

// keepUnread returns low, or the first entry published within b.unreadFor of now when that is
// earlier and t has no subscription (see above). Called with t.mu held.
func (t *topic) keepUnread(low storage.Position, now time.Time) storage.Position {
	if t.b.unreadFor <= 0 || len(t.subs) > 0 || len(t.parked) > 0 {
		return low
	}
	if p := t.log.FindByTime(now.Add(-t.b.unreadFor).UnixMilli()); p.Less(low) {
		return p
	}
	return low
}

// relieve frees everything before low, the first entry a subscription needs, open ledger or
// not, and asks for every topic to be trimmed: memory pressure (see above). Called with t.mu
// held.
func (t *topic) relieve(low storage.Position) {
	t.log.DropBefore(low)
	select {
	case t.b.sweep <- struct{}{}:
	default:
	}
}
