package storage

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fillSegments appends n entries of 500 bytes with publish times 0…n−1 (with 4 KiB segments:
// several sealed segments) and returns their positions.
func fillSegments(t *testing.T, l Log, n int) []Position {
	t.Helper()
	var ps []Position
	for i := range n {
		data := bytes.Repeat([]byte{byte(i)}, 500)
		ps = append(ps, mustAppend(t, l, Meta{PublishTime: int64(i), Key: "k"}, data))
	}
	return ps
}

// checkEntries fails unless l holds exactly the entries fillSegments wrote at ps.
func checkEntries(t *testing.T, l Log, ps []Position) {
	t.Helper()
	got := readAll(t, l)
	if len(got) != len(ps) {
		t.Fatalf("%d entries, want %d", len(got), len(ps))
	}
	for i, e := range got {
		if e.Pos != ps[i] || e.Meta.PublishTime != int64(i) || e.Meta.Key != "k" || !bytes.Equal(e.Data, bytes.Repeat([]byte{byte(i)}, 500)) {
			t.Fatalf("entry %d: %v %+v (%d bytes)", i, e.Pos, e.Meta, len(e.Data))
		}
		if g := l.FindByTime(int64(i)); g != ps[i] {
			t.Fatalf("FindByTime(%d) = %v, want %v", i, g, ps[i])
		}
	}
	if l.Entries() != int64(len(ps)) || l.Size() != int64(500*len(ps)) {
		t.Fatalf("Entries %d, Size %d", l.Entries(), l.Size())
	}
}

func (e *fileEnv) indexes(topic string) []string {
	e.t.Helper()
	name, _ := escapeTopic(topic)
	m, err := filepath.Glob(filepath.Join(e.dir, "topics", name, "*"+idxSuffix))
	if err != nil {
		e.t.Fatal(err)
	}
	slices.Sort(m)
	return m
}

// Opening a log reads its sealed segments' indexes, not their records: only the tail segment
// is read through, and every entry is served as it was written.
func TestFileOpensSealedSegmentsFromTheirIndexes(t *testing.T) {
	t.Parallel()
	ffs := &FaultFS{}
	e := newFileEnv(t, FileStoreOptions{SegmentSize: 4096, FS: ffs})
	ps := fillSegments(t, e.log(testTopic), 60)
	e.reopen() // the tail is scanned, then sealed with an index of its own
	e.log(testTopic)
	e.reopen()
	segs := e.segments(testTopic)
	if len(segs) < 6 {
		t.Fatalf("%d segments", len(segs))
	}
	if idx := e.indexes(testTopic); len(idx) != len(segs)-1 {
		t.Fatalf("%d indexes for %d segments (the open one has none): %q", len(idx), len(segs), idx)
	}
	var sealed int64
	for _, s := range segs[:len(segs)-1] {
		sealed += fileSize(t, s)
	}
	before := ffs.ReadBytes()
	l := e.log(testTopic)
	if read := ffs.ReadBytes() - before; read*4 > sealed {
		t.Errorf("opening read %d bytes of segments holding %d", read, sealed)
	}
	checkEntries(t, l, ps)
	if strings.Contains(e.logs.String(), "index does not match") {
		t.Errorf("log:\n%s", e.logs)
	}
	// Trimmed segments take their indexes with them. The deleter keeps one trimmed file as the
	// spare, under a name that is not a segment's, and deletes the others.
	l.TrimBefore(ps[30])
	n := e.settledSegments(testTopic, len(segs)-countLedgersBefore(ps, ps[30]))
	e.reopen()
	if got := len(e.indexes(testTopic)); got != n-1 {
		t.Errorf("%d indexes for %d segments after trimming", got, n)
	}
}

func countLedgersBefore(ps []Position, p Position) int {
	seen := map[int64]bool{}
	for _, q := range ps {
		if q.Ledger < p.Ledger {
			seen[q.Ledger] = true
		}
	}
	return len(seen)
}

// A missing, torn or foreign index is not trusted: the segment is scanned, served whole, and
// its index written again.
func TestFileRebuildsBadIndexes(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{SegmentSize: 4096})
	ps := fillSegments(t, e.log(testTopic), 60)
	e.reopen()
	e.log(testTopic)
	e.s.Close()
	idx := e.indexes(testTopic)
	if len(idx) < 4 {
		t.Fatalf("%d indexes", len(idx))
	}
	if err := os.Remove(idx[0]); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(idx[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(idx[1], raw[:len(raw)/2], 0o644); err != nil { // torn
		t.Fatal(err)
	}
	other, err := os.ReadFile(idx[3])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(idx[2], other, 0o644); err != nil { // another ledger's
		t.Fatal(err)
	}
	e.open()
	checkEntries(t, e.log(testTopic), ps)
	if got := strings.Count(e.logs.String(), "rebuilding it from the records"); got != 2 {
		t.Errorf("%d mismatches logged, want 2:\n%s", got, e.logs)
	}
	e.reopen()
	mark := len(e.logs.String())
	checkEntries(t, e.log(testTopic), ps)
	if strings.Contains(e.logs.String()[mark:], "index does not match") {
		t.Errorf("indexes not rebuilt:\n%s", e.logs)
	}
}

// A segment that changed under its index (cut short, or grown) is scanned, not read by the
// index: what is served is what the records say.
func TestFileIndexOfAChangedSegmentIsNotUsed(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{SegmentSize: 4096})
	ps := fillSegments(t, e.log(testTopic), 60)
	e.reopen()
	e.log(testTopic)
	e.s.Close()
	seg := e.segments(testTopic)[0]
	off := recordOffset(t, seg, 3)
	if err := os.Truncate(seg, off); err != nil {
		t.Fatal(err)
	}
	e.open()
	l := e.log(testTopic)
	got := readAll(t, l)
	if len(got) == 0 || got[0].Pos != ps[0] || got[3].Pos.Ledger == ps[0].Ledger {
		t.Fatalf("served %d entries from %v", len(got), got[0].Pos)
	}
	if !strings.Contains(e.logs.String(), "index does not match") {
		t.Errorf("log:\n%s", e.logs)
	}
}

// Ledger ids keep rising within a log even when meta.db goes back to an older copy.
func TestFileLedgerIdsRiseWithAnOldMetadataCopy(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{})
	mustAppend(t, e.log("persistent://public/default/other"), Meta{}, nil)
	e.s.Close()
	old, err := os.ReadFile(filepath.Join(e.dir, "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	var last Position
	for range ledgerBlock + 2 { // each open starts a ledger
		e.open()
		last = mustAppend(t, e.log(testTopic), Meta{}, nil)
		e.s.Close()
	}
	if err := os.WriteFile(filepath.Join(e.dir, "meta.db"), old, 0o644); err != nil {
		t.Fatal(err)
	}
	e.open()
	if p := mustAppend(t, e.log(testTopic), Meta{}, nil); p.Ledger <= last.Ledger {
		t.Errorf("ledger %d after %d", p.Ledger, last.Ledger)
	}
}
