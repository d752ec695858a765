package storage

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// FileStoreOptions tune a FileStore; the zero value is what a broker wants.
type FileStoreOptions struct {
	// SegmentSize is the size past which a log rolls over to a new segment (64 MiB if 0).
	SegmentSize int64
	// Rollover closes segments earlier, as upstream closes ledgers (its zero fields:
	// upstream's defaults).
	Rollover Rollover
	// NoSync skips every fsync: for tests and benchmarks only, it gives up durability.
	NoSync bool
	// Logger receives what recovery cut and what failed (nothing is logged if nil).
	Logger *slog.Logger
	// FS is the file layer segments are written through (OSFS if nil); tests pass a FaultFS.
	FS FS
	// TailCache is how many bytes of each log's newest entries stay in memory, so that
	// consumers that keep up are served without reading the file back (DefaultTailCache if 0;
	// none if negative).
	TailCache int
	// OpenFiles bounds the segment files open at once, all logs together (DefaultOpenFiles if
	// 0; no bound if negative), and a file unused for FileIdle is closed (DefaultFileIdle if
	// 0; never if negative): filecache.go.
	OpenFiles int
	FileIdle  time.Duration
}

// DefaultSegmentSize is the rollover size when FileStoreOptions.SegmentSize is 0.
const DefaultSegmentSize = 64 << 20

// DefaultTailCache is each log's tail cache when FileStoreOptions.TailCache is 0: a few hundred
// milliseconds of a busy topic, enough for consumers that keep up, whose lag is their permits.
const DefaultTailCache = 4 << 20

// FileStore is the durable Store: in one data directory,
//
//	LOCK                    flock'ed while open; holds the pid of the process that has it
//	meta.db                 bbolt: the Metadata buckets, plus the ledger id sequence
//	topics/<escaped topic>/<ledger, 20 digits>.seg
//	topics/<escaped topic>/<ledger>.idx           a sealed segment's index (segindex.go)
//	topics/<escaped topic>/<ledger>.seg.spare     a trimmed segment's file kept for reuse
//	topics/<escaped topic>/<ledger>.seg.deleting  a trimmed segment's file being deleted
//
// Ledger ids come from one bbolt sequence, so they are unique across topics and restarts.
type FileStore struct {
	dir  string
	opts FileStoreOptions
	log  *slog.Logger
	lock *os.File
	db   *bolt.DB
	// files bounds the segment files open at once, for every log of the store.
	files *fileCache

	mu     sync.Mutex
	logs   map[string]*FileLog
	closed bool

	ledgerMu    sync.Mutex
	nextLedger  int64 // next id of the reserved block [nextLedger, ledgerLimit]; 0: none
	ledgerLimit int64
}

// internalBucket holds the store's own keys; the broker's buckets are the Bucket* names.
const internalBucket = "_storage"

// The data directory holds the cluster's messages, which may be anyone's secrets: what the
// store creates is its owner's alone. A directory that exists already (a --data DIR the user
// made) keeps its mode, and so the access the user gave it.
const (
	filePerm os.FileMode = 0o600
	dirPerm  os.FileMode = 0o700
)

// OpenFileStore opens (creating if need be) the data directory dir. It fails at once, with an
// error wrapping ErrLocked, if another FileStore (in any process) has dir open.
func OpenFileStore(dir string, opts FileStoreOptions) (*FileStore, error) {
	if opts.SegmentSize <= 0 {
		opts.SegmentSize = DefaultSegmentSize
	}
	switch {
	case opts.TailCache == 0:
		opts.TailCache = DefaultTailCache
	case opts.TailCache < 0:
		opts.TailCache = 0
	}
	if opts.FS == nil {
		opts.FS = OSFS{}
	}
	if opts.OpenFiles == 0 {
		opts.OpenFiles = DefaultOpenFiles
	}
	if opts.FileIdle == 0 {
		opts.FileIdle = DefaultFileIdle
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := os.MkdirAll(filepath.Join(dir, "topics"), dirPerm); err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	db, err := bolt.Open(filepath.Join(dir, "meta.db"), filePerm, &bolt.Options{
		Timeout:        time.Second,
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	})
	if err != nil {
		unlockDir(lock)
		return nil, fmt.Errorf("storage: open %s: %w", filepath.Join(dir, "meta.db"), err)
	}
	db.NoSync = opts.NoSync
	s := &FileStore{dir: dir, opts: opts, log: log, lock: lock, db: db, logs: make(map[string]*FileLog)}
	if err := s.guardSequence(); err != nil {
		db.Close()
		unlockDir(lock)
		return nil, err
	}
	s.files = newFileCache(opts.FS, max(opts.OpenFiles, 0), max(opts.FileIdle, 0))
	return s, nil
}

// guardSequence moves the ledger sequence past every ledger on disk when meta.db has no
// sequence (it was lost, or this is a new data directory), so that ids are not handed out
// again. It reads every topic's directory, so only then: with a sequence, opening a log keeps
// its own ids rising (allocLedger's above), and starting reads no topic directory at all. A
// meta.db restored from an older copy may then hand a topic an id another topic already has,
// never one its own log had.
func (s *FileStore) guardSequence() error {
	var seq uint64
	if err := s.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte(internalBucket)); b != nil {
			seq = b.Sequence()
		}
		return nil
	}); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	if seq > 0 {
		return nil
	}
	var highest int64
	tops, err := os.ReadDir(s.topicsDir())
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	for _, t := range tops {
		if !t.IsDir() {
			continue
		}
		segs, err := os.ReadDir(filepath.Join(s.topicsDir(), t.Name()))
		if err != nil {
			return fmt.Errorf("storage: %w", err)
		}
		for _, f := range segs {
			if l, ok := parseSegFileName(f.Name()); ok {
				highest = max(highest, l)
			}
		}
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(internalBucket))
		if err != nil {
			return err
		}
		if b.Sequence() < uint64(highest) {
			s.log.Warn("storage: ledger sequence behind the segments on disk; moved past them",
				"sequence", b.Sequence(), "highest_ledger", highest)
			return b.SetSequence(uint64(highest))
		}
		return nil
	})
}

func (s *FileStore) topicsDir() string { return filepath.Join(s.dir, "topics") }

// ledgerBlock is how many ledger ids one bbolt transaction reserves, so that opening many
// logs at start does not cost one fsync each. Ids reserved and not handed out before a restart
// are skipped: ids only have to be unique and increasing.
const ledgerBlock = 32

// allocLedger returns a ledger id never handed out before, above above (the highest id the
// asking log has had).
func (s *FileStore) allocLedger(above int64) (int64, error) {
	s.ledgerMu.Lock()
	defer s.ledgerMu.Unlock()
	if s.nextLedger == 0 || s.nextLedger > s.ledgerLimit || s.nextLedger <= above {
		var seq uint64
		err := s.db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte(internalBucket))
			if err != nil {
				return err
			}
			seq = max(b.Sequence(), uint64(max(above, 0)))
			return b.SetSequence(seq + ledgerBlock)
		})
		if err != nil {
			return 0, err
		}
		s.nextLedger, s.ledgerLimit = int64(seq)+1, int64(seq)+ledgerBlock
	}
	id := s.nextLedger
	s.nextLedger++
	return id, nil
}

// OpenLog returns topic's log, recovering it from its segment files (or creating it).
func (s *FileStore) OpenLog(topic string) (Log, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if l, ok := s.logs[topic]; ok && !l.isClosed() {
		return l, nil
	}
	name, err := escapeTopic(topic)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(s.topicsDir(), name)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(dir, dirPerm); err != nil {
			return nil, fmt.Errorf("storage: %w", ioError(err))
		}
		if !s.opts.NoSync {
			if err := s.files.syncDir(s.topicsDir()); err != nil {
				return nil, fmt.Errorf("storage: %w", ioError(err))
			}
		}
	}
	l, err := openFileLog(dir, s.opts, s.files, s.log.With("topic", topic), s.allocLedger)
	if err != nil {
		return nil, err
	}
	s.logs[topic] = l
	return l, nil
}

// DeleteLog closes topic's log if it is open and removes its directory. It holds the store's
// lock throughout, so it must not be called from a done callback.
func (s *FileStore) DeleteLog(topic string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if l, ok := s.logs[topic]; ok {
		l.Close()
		delete(s.logs, topic)
	}
	name, err := escapeTopic(topic)
	if err != nil {
		return err
	}
	if err := s.files.transient(func() error { return os.RemoveAll(filepath.Join(s.topicsDir(), name)) }); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	if s.opts.NoSync {
		return nil
	}
	return s.files.syncDir(s.topicsDir())
}

// Logs lists the topics with a log directory, by their original names, sorted.
func (s *FileStore) Logs() ([]string, error) {
	des, err := os.ReadDir(s.topicsDir())
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	var out []string
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		if t, ok := unescapeTopic(de.Name()); ok {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (s *FileStore) Metadata() Metadata { return boltMeta{s.db} }

// OpenFiles reports how many segment files the store has open now and the most it has had
// open at once (OpenFiles bounds both).
func (s *FileStore) OpenFiles() (now, peak int) { return s.files.stats() }

// Close closes every open log (writing what they have queued), the metadata and the lock.
// Safe to call twice. The logs are closed outside the store's lock, so a done callback that
// runs meanwhile may still call the store (and get ErrClosed).
func (s *FileStore) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	logs := s.logs
	s.logs = nil
	s.mu.Unlock()
	var errs []error
	for _, l := range logs {
		errs = append(errs, l.Close())
	}
	s.files.close()
	errs = append(errs, s.db.Close(), unlockDir(s.lock))
	return errors.Join(errs...)
}

// escapeTopic maps a topic name to one directory name, reversibly: bytes outside
// [A-Za-z0-9_.-] (and a leading '.') become %XX.
func escapeTopic(topic string) (string, error) {
	if topic == "" {
		return "", errors.New("storage: empty topic name")
	}
	var b strings.Builder
	for i := 0; i < len(topic); i++ {
		c := topic[i]
		if safeByte(c) && !(i == 0 && c == '.') {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	if b.Len() > 255 {
		return "", fmt.Errorf("storage: topic name too long for a directory name (%d bytes escaped): %q", b.Len(), topic)
	}
	return b.String(), nil
}

func unescapeTopic(name string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c != '%' {
			if !safeByte(c) {
				return "", false
			}
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(name) {
			return "", false
		}
		hi, ok1 := unhex(name[i+1])
		lo, ok2 := unhex(name[i+2])
		if !ok1 || !ok2 {
			return "", false
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	return b.String(), b.Len() > 0
}

func safeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.'
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
