package storage

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// MemoryStore is a Store that keeps everything in memory (--in-memory): logs are Memory logs
// and metadata a map. Ledger ids come from one counter so they are unique within the process.
type MemoryStore struct {
	mu      sync.Mutex
	logs    map[string]*Memory
	buckets map[string]map[string][]byte
	policy  Rollover
	reuse   memReuse // slabs and index pages freed ledgers give back
	// ledgerCap closes a log's open ledger when the next entry would take its data past it,
	// whatever the policy says (memory.go).
	ledgerCap int64
	ledger    atomic.Int64 // the last ledger id handed out
	inUse     atomic.Int64 // what the logs hold (MemoryInUse)
}

// MemoryMeter is a Store that keeps its data in memory and can say how much: the broker
// budgets it (Config.MemoryLimit). Stores that keep data on disk do not implement it.
type MemoryMeter interface {
	// MemoryInUse is the memory the store's logs hold, in bytes: the slabs small entries are
	// copied into, the buffers of entries kept as they came, the index pages and the producer
	// names (memledger.go). Metadata is not counted.
	MemoryInUse() int64
}

// MemoryInUse implements MemoryMeter. It is cheap: one atomic load.
func (s *MemoryStore) MemoryInUse() int64 { return s.inUse.Load() }

// DefaultMemoryLedgerBytes is the size at which an in-memory ledger is full unless
// MemoryStoreOptions.Rollover says otherwise: a couple of MiB, so that what every subscription
// has acknowledged is freed that far behind the slowest one (a ledger at a time, as upstream
// frees data), where upstream's 2 GiB ledgers kept ten minutes old would hold a busy topic's
// last ten minutes in memory. Every busy topic holds up to about two ledgers (the open one,
// and the one just closed until the next trim): 100 busy topics at 4 MiB ledgers took the
// broker's RSS over 1 GB in make bench's many part, as the garbage collector lets the heap
// grow to twice what is live.
const DefaultMemoryLedgerBytes = 2 << 20

// MemoryStoreOptions tune a MemoryStore; the zero value is what a broker wants without a
// configuration of its own.
type MemoryStoreOptions struct {
	// Rollover closes ledgers. Its zero fields are upstream's defaults but for two, chosen for
	// memory: MaxBytes is DefaultMemoryLedgerBytes and MinAge none (as upstream's
	// managedLedgerMinLedgerRolloverTimeMinutes=0). Set MinAge (upstream's 10 minutes) to keep
	// full ledgers open as upstream does.
	Rollover Rollover
	// Blocks lends the slabs small entries are copied into (nil: the garbage collector).
	Blocks Blocks
}

// NewMemoryStore returns an empty in-memory store with the default options.
func NewMemoryStore() *MemoryStore { return NewMemoryStoreWith(MemoryStoreOptions{}) }

// NewMemoryStoreWith returns an empty in-memory store tuned by opts.
func NewMemoryStoreWith(opts MemoryStoreOptions) *MemoryStore {
	policy := opts.Rollover
	if policy.MaxBytes <= 0 {
		policy.MaxBytes = DefaultMemoryLedgerBytes
	}
	if policy.MinAge == 0 {
		policy.MinAge = -1 // no minimum
	}
	return &MemoryStore{
		logs: make(map[string]*Memory), buckets: make(map[string]map[string][]byte),
		policy: policy, reuse: memReuse{blocks: opts.Blocks}, ledgerCap: DefaultSegmentSize,
	}
}

func (s *MemoryStore) allocLedger() int64 { return s.ledger.Add(1) }

func (s *MemoryStore) OpenLog(topic string) (Log, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.logs[topic]; ok && !l.isClosed() {
		return l, nil
	}
	l := newMemory(s.policy, s.allocLedger, &s.reuse)
	l.ledgerCap = s.ledgerCap
	l.meter = &s.inUse
	s.logs[topic] = l
	return l, nil
}

func (s *MemoryStore) DeleteLog(topic string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.logs[topic]; ok {
		l.Close()
		delete(s.logs, topic)
	}
	return nil
}

func (s *MemoryStore) Logs() ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.logs))
	for t := range s.logs {
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}

func (s *MemoryStore) Metadata() Metadata { return memMeta{s} }

func (s *MemoryStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.logs {
		l.Close()
	}
	return nil
}

type memMeta struct{ s *MemoryStore }

func (m memMeta) Get(bucket, key string) ([]byte, bool, error) {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	v, ok := m.s.buckets[bucket][key]
	return v, ok, nil
}

func (m memMeta) Scan(bucket, prefix string, fn func(string, []byte) bool) error {
	m.s.mu.Lock()
	b := m.s.buckets[bucket]
	// Grown as keys match, not made as large as the bucket: a topic's cursors are a few keys
	// of a bucket holding every topic's, and a broker opening 10,000 topics made 10,000
	// bucket-sized slices for them.
	var keys []string
	for k := range b {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	vals := make([][]byte, len(keys))
	for i, k := range keys {
		vals[i] = b[k]
	}
	m.s.mu.Unlock()
	for i, k := range keys {
		if !fn(k, vals[i]) {
			break
		}
	}
	return nil
}

func (m memMeta) Update(fn func(MetadataTx) error) error {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	tx := &memTx{s: m.s, puts: map[string]map[string][]byte{}, dels: map[string]map[string]bool{}}
	if err := fn(tx); err != nil {
		return err
	}
	for b, kv := range tx.dels {
		for k := range kv {
			delete(m.s.buckets[b], k)
		}
	}
	for b, kv := range tx.puts {
		if m.s.buckets[b] == nil {
			m.s.buckets[b] = make(map[string][]byte)
		}
		for k, v := range kv {
			m.s.buckets[b][k] = v
		}
	}
	return nil
}

// memTx buffers writes so a failing Update changes nothing.
type memTx struct {
	s    *MemoryStore
	puts map[string]map[string][]byte
	dels map[string]map[string]bool
}

func (t *memTx) Get(bucket, key string) ([]byte, bool) {
	if v, ok := t.puts[bucket][key]; ok {
		return v, true
	}
	if t.dels[bucket][key] {
		return nil, false
	}
	v, ok := t.s.buckets[bucket][key]
	return v, ok
}

func (t *memTx) Put(bucket, key string, value []byte) error {
	if t.puts[bucket] == nil {
		t.puts[bucket] = make(map[string][]byte)
	}
	t.puts[bucket][key] = append([]byte(nil), value...)
	delete(t.dels[bucket], key)
	return nil
}

func (t *memTx) Delete(bucket, key string) error {
	if t.dels[bucket] == nil {
		t.dels[bucket] = make(map[string]bool)
	}
	t.dels[bucket][key] = true
	delete(t.puts[bucket], key)
	return nil
}

func (t *memTx) DeletePrefix(bucket, prefix string) error {
	for k := range t.s.buckets[bucket] {
		if strings.HasPrefix(k, prefix) {
			t.Delete(bucket, k)
		}
	}
	for k := range t.puts[bucket] {
		if strings.HasPrefix(k, prefix) {
			t.Delete(bucket, k)
		}
	}
	return nil
}
