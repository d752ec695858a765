package storage

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/internal/testwait"
)

const testTopic = "persistent://public/default/t"

type fileEnv struct {
	t    *testing.T
	dir  string
	opts FileStoreOptions
	logs *logBuffer
	s    *FileStore
}

// newFileEnv opens a FileStore in a fresh directory; reopen closes and opens it again.
func newFileEnv(t *testing.T, opts FileStoreOptions) *fileEnv {
	t.Helper()
	e := &fileEnv{t: t, dir: t.TempDir(), opts: opts, logs: &logBuffer{}}
	e.opts.Logger = slog.New(slog.NewTextHandler(e.logs, nil))
	e.open()
	t.Cleanup(func() {
		if e.s != nil {
			e.s.Close()
		}
		if t.Failed() {
			t.Logf("store log:\n%s", e.logs)
		}
	})
	return e
}

func (e *fileEnv) open() {
	e.t.Helper()
	s, err := OpenFileStore(e.dir, e.opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.s = s
}

func (e *fileEnv) reopen() {
	e.t.Helper()
	if err := e.s.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.s = nil
	e.open()
}

func (e *fileEnv) log(topic string) Log {
	e.t.Helper()
	l, err := e.s.OpenLog(topic)
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

// settledSegments waits, for a few seconds at most, until topic has want segment files (the
// files of trimmed segments are deleted in the background) and returns how many it has.
func (e *fileEnv) settledSegments(topic string, want int) int {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := len(e.segments(topic))
		if n == want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// segments lists topic's segment files, oldest first.
func (e *fileEnv) segments(topic string) []string {
	e.t.Helper()
	name, _ := escapeTopic(topic)
	m, err := filepath.Glob(filepath.Join(e.dir, "topics", name, "*.seg"))
	if err != nil {
		e.t.Fatal(err)
	}
	slices.Sort(m)
	return m
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func readAll(t *testing.T, l Log) []Entry {
	t.Helper()
	got, err := l.Read(Position{}, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestFileRestartKeepsDataAndPositions(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{})
	ps := fill(t, e.log(testTopic), 0, 20)
	other := mustAppend(t, e.log("persistent://public/default/other"), testMeta(0), nil)

	e.reopen()
	l := e.log(testTopic)
	got := readAll(t, l)
	if len(got) != 20 {
		t.Fatalf("after restart: %d entries", len(got))
	}
	for i, en := range got {
		if en.Pos != ps[i] {
			t.Errorf("entry %d at %v, was %v", i, en.Pos, ps[i])
		}
		checkEntry(t, en, i)
	}
	if l.First() != ps[0] || l.Last() != ps[19] || l.Entries() != 20 {
		t.Errorf("First %v Last %v Entries %d", l.First(), l.Last(), l.Entries())
	}
	// New entries go to a new ledger, never used before by any topic.
	p := mustAppend(t, l, testMeta(20), testData(20))
	if p.Entry != 0 || p.Ledger <= ps[19].Ledger || p.Ledger == other.Ledger {
		t.Errorf("append after restart at %v (before: %v, other topic %v)", p, ps[19], other)
	}
	if n := l.Next(ps[19]); n != p {
		t.Errorf("Next(last before restart) = %v, want %v", n, p)
	}
	if got, _ := l.Read(ps[18], 10); len(got) != 3 || got[2].Pos != p {
		t.Errorf("Read across the restart = %v", got)
	}
	// Counting from a position spans the ledgers (a subscription's backlog).
	for from, want := range map[Position]int64{ps[0]: 21, ps[5]: 16, ps[19]: 2, p: 1, l.Next(p): 0} {
		if got := l.EntriesFrom(from); got != want {
			t.Errorf("EntriesFrom(%v) = %d, want %d", from, got, want)
		}
	}
	if got, err := e.s.Logs(); err != nil || !slices.Equal(got, []string{"persistent://public/default/other", testTopic}) {
		t.Errorf("Logs = %q, %v", got, err)
	}

	// An idle restart reuses the empty open segment rather than leaving one per restart.
	before := len(e.segments(testTopic))
	e.reopen()
	e.reopen()
	l = e.log(testTopic)
	if n := len(e.segments(testTopic)); n != before+1 {
		t.Errorf("%d segments after two restarts, %d before the first", n, before)
	}
	if q := mustAppend(t, l, testMeta(21), nil); q.Ledger <= p.Ledger {
		t.Errorf("ledger went back: %v after %v", q, p)
	}
}

func TestFileTornTailIsCut(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{})
	ps := fill(t, e.log(testTopic), 0, 10)
	e.s.Close()
	seg := e.segments(testTopic)[0]
	size := fileSize(t, seg)
	if err := os.Truncate(seg, size-5); err != nil { // mid-record
		t.Fatal(err)
	}
	e.open()
	l := e.log(testTopic)
	got := readAll(t, l)
	if len(got) != 9 || got[8].Pos != ps[8] {
		t.Fatalf("after a torn tail: %d entries", len(got))
	}
	cutAt := size - int64(recordSize(ptr(testMeta(9)), testData(9)))
	if fs := fileSize(t, seg); fs != cutAt {
		t.Errorf("segment is %d bytes, want %d (cut at the torn record)", fs, cutAt)
	}
	logged := e.logs.String()
	for _, want := range []string{"cut a torn or corrupt tail", seg, "offset=" + itoa(cutAt), "bytes=" + itoa(size-5-cutAt), "short record"} {
		if !strings.Contains(logged, want) {
			t.Errorf("log lacks %q:\n%s", want, logged)
		}
	}
	if p := mustAppend(t, l, testMeta(9), testData(9)); p.Ledger == ps[0].Ledger {
		t.Errorf("appended into the recovered segment at %v", p)
	}
}

func TestFileFlippedBytesAreCut(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{})
	ps := fill(t, e.log(testTopic), 0, 10)
	e.s.Close()
	seg := e.segments(testTopic)[0]
	off := recordOffset(t, seg, 6)
	flip(t, seg, off+recPrefix+recFixed+3) // in the key
	e.open()
	got := readAll(t, e.log(testTopic))
	if len(got) != 6 || got[5].Pos != ps[5] {
		t.Fatalf("after flipped bytes in entry 6: %d entries", len(got))
	}
	if fs := fileSize(t, seg); fs != off {
		t.Errorf("segment is %d bytes, want %d", fs, off)
	}
	if logged := e.logs.String(); !strings.Contains(logged, "bad checksum") || !strings.Contains(logged, "offset="+itoa(off)) {
		t.Errorf("log:\n%s", logged)
	}
}

func TestFileCorruptSealedSegmentIsServedUpToTheDamage(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{})
	fill(t, e.log(testTopic), 0, 10)
	e.reopen()
	ps := fill(t, e.log(testTopic), 10, 5) // a second segment
	e.s.Close()
	segs := e.segments(testTopic)
	if len(segs) != 2 {
		t.Fatalf("segments: %q", segs)
	}
	size := fileSize(t, segs[0])
	flip(t, segs[0], recordOffset(t, segs[0], 3)+recPrefix+1) // entry id of entry 3
	e.open()
	l := e.log(testTopic)
	got := readAll(t, l)
	if len(got) != 3+5 || got[3].Pos != ps[0] {
		t.Fatalf("got %d entries", len(got))
	}
	if l.Next(got[2].Pos) != ps[0] {
		t.Errorf("Next over the damage = %v", l.Next(got[2].Pos))
	}
	if fileSize(t, segs[0]) != size {
		t.Error("a sealed segment was truncated")
	}
	if logged := e.logs.String(); !strings.Contains(logged, "corrupt record in sealed segment") {
		t.Errorf("log:\n%s", logged)
	}
}

func TestFileReadVerifiesChecksum(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{TailCache: -1}) // every read from the file
	l := e.log(testTopic)
	ps := fill(t, l, 0, 5)
	seg := e.segments(testTopic)[0]
	flip(t, seg, recordOffset(t, seg, 2)+recPrefix+recFixed+1)
	got, err := l.Read(ps[0], 10)
	if err == nil || len(got) != 2 {
		t.Errorf("Read over a bad record: %d entries, %v", len(got), err)
	}
	if _, ok := l.Get(ps[2]); ok {
		t.Error("Get served a bad record")
	}
	if _, ok := l.Get(ps[3]); !ok {
		t.Error("Get of a good record failed")
	}
}

func TestFileGroupCommit(t *testing.T) {
	t.Parallel()
	ffs := &FaultFS{}
	e := newFileEnv(t, FileStoreOptions{FS: ffs})
	l := e.log(testTopic)
	entered := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	ffs.BeforeSync(func(string) {
		once.Do(func() { close(entered); <-release })
	})
	syncs0 := ffs.Syncs()

	const n = 200
	var mu sync.Mutex
	var order []Position
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		l.Append(testMeta(i), testData(i), nil, func(p Position, err error) {
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			order = append(order, p)
			mu.Unlock()
			wg.Done()
		})
		if i == 0 {
			select {
			case <-entered:
			case <-time.After(waitFor):
				t.Fatal("the writer never synced")
			}
		}
	}
	// The writer is inside the first sync: nothing may be acknowledged or readable yet.
	mu.Lock()
	acked := len(order)
	mu.Unlock()
	if acked != 0 || l.Entries() != 0 {
		t.Fatalf("%d appends acknowledged, %d entries readable before their sync", acked, l.Entries())
	}
	close(release)
	waitGroup(t, &wg)
	for i, p := range order {
		if p.Entry != int64(i) {
			t.Fatalf("callback %d got %v", i, p)
		}
	}
	// One sync for the first entry, one for the 199 queued behind it.
	if s := ffs.Syncs() - syncs0; s != 2 {
		t.Errorf("%d syncs for %d appends, want 2", s, n)
	}
}

func TestFileNoSpace(t *testing.T) {
	t.Parallel()
	ffs := &FaultFS{}
	e := newFileEnv(t, FileStoreOptions{FS: ffs})
	l := e.log(testTopic)
	ps := fill(t, l, 0, 3)
	seg := e.segments(testTopic)[0]
	good := fileSize(t, seg)

	ffs.FailWrites(syscall.ENOSPC)
	var wg sync.WaitGroup
	wg.Add(5)
	var errs []error
	var mu sync.Mutex
	for i := range 5 {
		l.Append(testMeta(3+i), testData(3+i), nil, func(p Position, err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			wg.Done()
		})
	}
	waitGroup(t, &wg)
	for _, err := range errs {
		if !errors.Is(err, ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("append on a full disk: %v", err)
		}
	}
	if fs := fileSize(t, seg); fs != good {
		t.Errorf("segment is %d bytes after failed writes, was %d", fs, good)
	}
	if got := readAll(t, l); len(got) != 3 {
		t.Errorf("reads during a full disk: %d entries", len(got))
	}

	// A failing sync (an I/O error) is reported as itself, and also cut back.
	ffs.FailWrites(nil)
	ffs.FailSyncs(syscall.EIO)
	if _, err := appendSync(t, l, testMeta(3), testData(3)); !errors.Is(err, syscall.EIO) || errors.Is(err, ErrNoSpace) {
		t.Errorf("append with a failing sync: %v", err)
	}
	if fs := fileSize(t, seg); fs != good {
		t.Errorf("segment is %d bytes after a failed sync, was %d", fs, good)
	}

	ffs.Heal()
	p := mustAppend(t, l, testMeta(3), testData(3))
	if p != l.Next(ps[2]) {
		t.Errorf("append after space returned at %v, want %v", p, l.Next(ps[2]))
	}
	e.reopen()
	got := readAll(t, e.log(testTopic))
	if len(got) != 4 {
		t.Fatalf("after restart: %d entries", len(got))
	}
	for i, en := range got {
		checkEntry(t, en, i)
	}
	if logged := e.logs.String(); strings.Contains(logged, "cut a torn") || strings.Contains(logged, "corrupt") {
		t.Errorf("recovery found damage after a full disk:\n%s", logged)
	}
}

func TestFileNoSpaceAtRollover(t *testing.T) {
	t.Parallel()
	ffs := &FaultFS{}
	e := newFileEnv(t, FileStoreOptions{FS: ffs, SegmentSize: 1024})
	l := e.log(testTopic)
	big := make([]byte, 600)
	mustAppend(t, l, Meta{}, big)
	mustAppend(t, l, Meta{}, big) // rolled over: this segment has room for no more
	before := len(e.segments(testTopic))
	ffs.FailWrites(syscall.ENOSPC) // so the next append needs a new segment file, which fails
	if _, err := appendSync(t, l, Meta{}, big); !errors.Is(err, ErrNoSpace) {
		t.Errorf("append needing a new segment on a full disk: %v", err)
	}
	ffs.Heal()
	p := mustAppend(t, l, Meta{}, big)
	if p.Entry != 0 || len(e.segments(testTopic)) != before+1 {
		t.Errorf("after space returned: %v, %d segments", p, len(e.segments(testTopic)))
	}
}

func TestFileRolloverAndTrim(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{SegmentSize: 4096})
	l := e.log(testTopic)
	var ps []Position
	for i := range 40 {
		ps = append(ps, mustAppend(t, l, Meta{PublishTime: int64(i)}, make([]byte, 500)))
	}
	segs := e.segments(testTopic)
	if len(segs) < 5 {
		t.Fatalf("%d segments for 20 KB at 4 KB each", len(segs))
	}
	for _, s := range segs[:len(segs)-1] {
		if sz := fileSize(t, s); sz > 4096 {
			t.Errorf("%s is %d bytes", s, sz)
		}
	}
	for i := 1; i < len(ps); i++ {
		if ps[i].Ledger != ps[i-1].Ledger {
			if ps[i].Entry != 0 || ps[i].Ledger < ps[i-1].Ledger {
				t.Errorf("rollover from %v to %v", ps[i-1], ps[i])
			}
		}
		if n := l.Next(ps[i-1]); n != ps[i] {
			t.Errorf("Next(%v) = %v, want %v", ps[i-1], n, ps[i])
		}
		if got := l.FindByTime(int64(i)); got != ps[i] {
			t.Errorf("FindByTime(%d) = %v, want %v", i, got, ps[i])
		}
	}
	if got := readAll(t, l); len(got) != 40 {
		t.Errorf("Read across segments: %d entries", len(got))
	}

	// Trimming in the middle of the third segment deletes the first two files only.
	var ledgers []int64
	for _, p := range ps {
		if len(ledgers) == 0 || ledgers[len(ledgers)-1] != p.Ledger {
			ledgers = append(ledgers, p.Ledger)
		}
	}
	mid := Position{Ledger: ledgers[2], Entry: 1}
	l.TrimBefore(mid)
	if n := e.settledSegments(testTopic, len(segs)-2); n != len(segs)-2 {
		t.Errorf("%d segment files after trimming two, had %d", n, len(segs))
	}
	if l.First() != (Position{ledgers[2], 0}) {
		t.Errorf("First = %v", l.First())
	}
	checkTrimmed(t, l, ps, slices.Index(ps, mid), nil)
	if got, _ := l.Read(ps[0], 1); len(got) != 1 || got[0].Pos != l.First() {
		t.Errorf("Read from a deleted segment starts at %v", got)
	}
	if n := l.Next(ps[0]); n != l.First() {
		t.Errorf("Next(in a deleted segment) = %v", n)
	}

	// Trimming everything keeps only the open segment.
	l.TrimBefore(l.Next(l.Last()))
	if n := e.settledSegments(testTopic, 1); n != 1 {
		t.Errorf("%d segment files after trimming all", n)
	}
	e.reopen()
	l = e.log(testTopic)
	if got := readAll(t, l); len(got) == 0 || got[len(got)-1].Pos != ps[39] {
		t.Errorf("after restart: %d entries", len(got))
	}
}

func TestFileLock(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{})
	_, err := OpenFileStore(e.dir, FileStoreOptions{})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, e.dir) || !strings.Contains(msg, "pid "+itoa(int64(os.Getpid()))) {
		t.Errorf("error does not name the directory and holder: %v", err)
	}
	e.reopen() // released by Close
	if err := e.s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	e.s = nil
}

func TestFileMetadataSurvivesRestart(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{})
	err := e.s.Metadata().Update(func(tx MetadataTx) error {
		return tx.Put(BucketCursors, testTopic+"\x00sub", []byte(`{"markDelete":"1:2"}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	e.s.Metadata().Update(func(tx MetadataTx) error {
		tx.Put(BucketCursors, testTopic+"\x00sub", []byte("lost"))
		return errors.New("abort")
	})
	e.reopen()
	v, ok, err := e.s.Metadata().Get(BucketCursors, testTopic+"\x00sub")
	if err != nil || !ok || string(v) != `{"markDelete":"1:2"}` {
		t.Errorf("after restart: %q %v %v", v, ok, err)
	}
	if err := e.s.Metadata().Update(func(tx MetadataTx) error { return tx.Put(BucketTopics, "", nil) }); err == nil {
		t.Error("an empty key was accepted")
	}
}

func TestFileLedgerSequenceGuard(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{})
	p := mustAppend(t, e.log(testTopic), Meta{}, nil)
	e.s.Close()
	// Losing meta.db must not make ledger ids start again.
	if err := os.Remove(filepath.Join(e.dir, "meta.db")); err != nil {
		t.Fatal(err)
	}
	e.open()
	q := mustAppend(t, e.log("persistent://public/default/new"), Meta{}, nil)
	if q.Ledger <= p.Ledger {
		t.Errorf("ledger %d handed out again (had %d)", q.Ledger, p.Ledger)
	}
}

func TestFileCloseWritesQueued(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{})
	l := e.log(testTopic)
	var wg sync.WaitGroup
	wg.Add(100)
	for i := range 100 {
		l.Append(testMeta(i), testData(i), nil, func(_ Position, err error) {
			if err != nil {
				t.Error(err)
			}
			wg.Done()
		})
	}
	e.reopen() // closes the log with appends still queued
	waitGroup(t, &wg)
	if n := len(readAll(t, e.log(testTopic))); n != 100 {
		t.Errorf("%d entries after Close with appends queued", n)
	}
}

func TestEscapeTopic(t *testing.T) {
	t.Parallel()
	for _, topic := range []string{"persistent://public/default/t", "a b/%2F", ".", "..", "ünïcode", "x-partition-3"} {
		name, err := escapeTopic(topic)
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(name, "/:\x00 ") || name == "." || name == ".." || strings.HasPrefix(name, ".") {
			t.Errorf("escape(%q) = %q", topic, name)
		}
		if back, ok := unescapeTopic(name); !ok || back != topic {
			t.Errorf("unescape(escape(%q)) = %q", topic, back)
		}
	}
	if _, err := escapeTopic(strings.Repeat("/", 100)); err == nil {
		t.Error("a name too long for a directory was accepted")
	}
}

// recordOffset is the file offset of entry i's record in a segment file.
func recordOffset(t *testing.T, path string, i int) int64 {
	t.Helper()
	files := newFileCache(OSFS{}, 0, 0)
	defer files.close()
	s := &segment{ledger: ledgerOf(t, path), path: path, f: files.file(path)}
	defer s.f.Close()
	if _, err := s.scan(); err != nil || len(s.idx) <= i {
		t.Fatalf("scan %s: %d entries, %v", path, len(s.idx), err)
	}
	return s.idx[i].off
}

func ledgerOf(t *testing.T, path string) int64 {
	l, ok := parseSegFileName(filepath.Base(path))
	if !ok {
		t.Fatalf("not a segment: %s", path)
	}
	return l
}

func flip(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T { return &v }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestFileDamagedHeaderKeepsTheFile(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{})
	fill(t, e.log(testTopic), 0, 3)
	e.s.Close()
	seg := e.segments(testTopic)[0]
	flip(t, seg, 2)
	e.open()
	if got := readAll(t, e.log(testTopic)); len(got) != 0 {
		t.Errorf("served %d entries of a segment with a bad header", len(got))
	}
	if _, err := os.Stat(seg); err != nil {
		t.Errorf("a segment with records behind a bad header was removed: %v", err)
	}
	if !strings.Contains(e.logs.String(), "bad header") {
		t.Errorf("log:\n%s", e.logs)
	}
}

func TestFileTornHeaderIsRemoved(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{})
	ps := fill(t, e.log(testTopic), 0, 3)
	e.reopen()
	e.log(testTopic) // opens a new, empty segment: the one to tear
	e.s.Close()
	segs := e.segments(testTopic)
	if err := os.Truncate(segs[1], 7); err != nil {
		t.Fatal(err)
	}
	e.open()
	l := e.log(testTopic)
	if got := readAll(t, l); len(got) != 3 {
		t.Errorf("%d entries", len(got))
	}
	if _, err := os.Stat(segs[1]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("torn segment still there: %v", err)
	}
	if p := mustAppend(t, l, Meta{}, nil); p.Ledger <= ps[2].Ledger || p.Ledger == ledgerOf(t, segs[1]) {
		t.Errorf("append after a torn header at %v", p)
	}
}

func TestFileCutSegmentIsNotReused(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{})
	p := mustAppend(t, e.log(testTopic), testMeta(0), testData(0))
	e.s.Close()
	seg := e.segments(testTopic)[0]
	flip(t, seg, segHeaderSize+recPrefix+2) // its only record: now everything in it is cut
	e.open()
	l := e.log(testTopic)
	if l.Entries() != 0 {
		t.Fatalf("%d entries", l.Entries())
	}
	if q := mustAppend(t, l, testMeta(1), testData(1)); q.Ledger == p.Ledger {
		t.Errorf("position %v handed out twice", q)
	}
}

// Deleting a trimmed segment's file can take tens of milliseconds; TrimBefore is called under
// the topic's lock, so it must not wait for it. Close does wait, so nothing is left half done.
func TestFileTrimDeletesInBackground(t *testing.T) {
	t.Parallel()
	ffs := &FaultFS{}
	e := newFileEnv(t, FileStoreOptions{SegmentSize: 4096, FS: ffs})
	l := e.log(testTopic)
	for range 20 {
		mustAppend(t, l, Meta{}, make([]byte, 500))
	}
	before := len(e.segments(testTopic))
	if before < 3 {
		t.Fatalf("%d segments", before)
	}
	removing := make(chan string, before)
	release := make(chan struct{})
	ffs.BeforeRemove(func(name string) {
		removing <- name
		<-release
	})

	trimmed := make(chan struct{})
	go func() {
		l.TrimBefore(l.Next(l.Last()))
		close(trimmed)
	}()
	select {
	case <-trimmed:
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("TrimBefore waited for a file removal")
	}
	if first, last := l.First(), l.Last(); first.Ledger != last.Ledger {
		t.Errorf("First = %v right after trimming everything; want the open segment's (%v)", first, last)
	}
	select {
	case name := <-removing:
		t.Logf("deleting %s in the background", filepath.Base(name))
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("no trimmed segment is being deleted")
	}

	closed := make(chan error, 1)
	go func() { closed <- l.Close() }()
	select {
	case err := <-closed:
		close(release)
		t.Fatalf("Close returned (%v) while a trimmed segment was still being deleted", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return once the removal went on")
	}
	if n := len(e.segments(testTopic)); n != 1 {
		t.Errorf("%d segment files after Close; want only the open one", n)
	}
}

// A stop in the middle of deleting a trimmed segment leaves its renamed, half-shrunk file; the
// next start finishes the deletion and does not take the file for a segment.
func TestFileRecoveryFinishesDeletion(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{SegmentSize: 4096})
	l := e.log(testTopic)
	for range 20 {
		mustAppend(t, l, Meta{}, make([]byte, 500))
	}
	want := readAll(t, l)
	e.s.Close()

	segs := e.segments(testTopic)
	leftover := filepath.Join(filepath.Dir(segs[0]), segFileName(1<<40)+deletingSuffix)
	data, err := os.ReadFile(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(leftover, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}

	e.open()
	l = e.log(testTopic)
	testwait.For(t, 5*time.Second, "the leftover of an interrupted deletion is still there", func() bool {
		_, err := os.Stat(leftover)
		return errors.Is(err, os.ErrNotExist)
	})
	got := readAll(t, l)
	if len(got) != len(want) || got[len(got)-1].Pos != want[len(want)-1].Pos {
		t.Errorf("after restart: %d entries up to %v; want %d up to %v", len(got), got[len(got)-1].Pos, len(want), want[len(want)-1].Pos)
	}
	if strings.Contains(e.logs.String(), "corrupt") || strings.Contains(e.logs.String(), "torn") {
		t.Errorf("recovery reported damage:\n%s", e.logs)
	}
}

// The newest entries are served from memory as they were appended; older ones are read back from
// the file and checked. A byte flipped on disk shows which path a read took.
func TestFileTailCache(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{TailCache: 3 * 100})
	l := e.log(testTopic)
	var ps []Position
	for i := range 10 {
		ps = append(ps, mustAppend(t, l, Meta{PublishTime: int64(i)}, bytes.Repeat([]byte{byte('a' + i)}, 100)))
	}
	seg := e.segments(testTopic)[0]
	for _, i := range []int{8, 2} { // the later first: an offset is found by scanning
		flip(t, seg, recordOffset(t, seg, i)+recPrefix+recFixed+1)
	}
	got, err := l.Read(ps[7], 10)
	if err != nil || len(got) != 3 {
		t.Fatalf("Read of the cached tail: %d entries, %v", len(got), err)
	}
	for k, en := range got {
		if en.Pos != ps[7+k] || !bytes.Equal(en.Data, bytes.Repeat([]byte{byte('a' + 7 + k)}, 100)) {
			t.Errorf("cached entry %d: %v %q", k, en.Pos, en.Data)
		}
	}
	if _, ok := l.Get(ps[8]); !ok {
		t.Error("Get of a cached entry failed")
	}
	if got, err := l.Read(ps[0], 10); err == nil || len(got) != 2 {
		t.Errorf("Read from the file over a bad record: %d entries, %v", len(got), err)
	}
	if _, ok := l.Get(ps[2]); ok {
		t.Error("Get served a bad record from the file")
	}

	// Trimmed entries leave the cache with their segment.
	e2 := newFileEnv(t, FileStoreOptions{SegmentSize: 4096})
	l2 := e2.log(testTopic)
	ps2 := sameSize(t, l2, 0, 20)
	l2.TrimBefore(ps2[19])
	if got, _ := l2.Read(ps2[0], 1); len(got) != 1 || got[0].Pos != l2.First() || got[0].Pos.Ledger != ps2[19].Ledger {
		t.Errorf("Read from a trimmed position gave %v; first is %v", got, l2.First())
	}
	if _, ok := l2.Get(ps2[0]); ok {
		t.Error("Get served a trimmed entry")
	}
}
