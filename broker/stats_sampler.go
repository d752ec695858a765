package broker

import "time"

// The rate sampler: one goroutine (owned by the Broker, started by the first stats request,
// stopped by Close) records every topic's, producer's, subscription's and consumer's counters
// each rateTick; the stats derive per-second rates from the oldest sample within rateWindow.
// Samples live in adminState.rates, under the admin mutex.

const (
	rateTick   = time.Second
	rateWindow = 5 * time.Second
)

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

// startSampler starts the rate sampler once; it stops with the broker. The first sample is
// taken before it returns, so that what happens after the first stats request shows in the
// next one's rates however late the sampler's goroutine first runs. Called with no lock held.
func (b *Broker) startSampler() {
	b.admin.samplerOnce.Do(func() {
		b.guard("sampling rates", func() { b.sample(time.Now()) })
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
	for t := range b.topics.sweep() {
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
