package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/internal/testwait"
)

// waitForFiles waits, for a few seconds at most, until pattern (a glob in dir) matches exactly
// want files, and returns them.
func waitForFiles(t *testing.T, dir, pattern string, want int) []string {
	t.Helper()
	var m []string
	testwait.ForNil(t, spareTTL+5*time.Second, "files settle", func() (err error) {
		if m, err = filepath.Glob(filepath.Join(dir, pattern)); err != nil {
			t.Fatal(err)
		}
		if len(m) != want {
			return fmt.Errorf("%d files match %s in %s, want %d: %q", len(m), pattern, dir, want, m)
		}
		return nil
	})
	return m
}

// sameSize fills entries that all encode to records of one size, so that an older ledger's
// records in a recycled file lie exactly where the new ledger's next ones would, entry ids and
// all: only the ledger id in the checksum tells them apart.
func sameSize(t *testing.T, l Log, from, n int) []Position {
	t.Helper()
	var ps []Position
	for i := from; i < from+n; i++ {
		ps = append(ps, mustAppend(t, l, Meta{PublishTime: int64(i)}, fmt.Appendf(nil, "%0500d", i)))
	}
	return ps
}

// segmentFill returns how many entries of ps filled the first segment and how many the
// open (last) one holds.
func segmentFill(ps []Position) (perSegment, inOpen int) {
	for _, p := range ps {
		if p.Ledger == ps[0].Ledger {
			perSegment++
		}
	}
	return perSegment, int(ps[len(ps)-1].Entry) + 1
}

// copyDir copies every regular file of src into dst (a snapshot of a running store: what a
// crash at this moment could leave, since everything was synced).
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A trimmed segment's file is kept and the next rollover writes over it; what the older ledger
// left past the new one's end is never served, neither before nor after a crash, and a clean
// stop cuts it off.
func TestFileRecyclesTrimmedSegments(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{SegmentSize: 4096})
	l := e.log(testTopic)
	first := sameSize(t, l, 0, 20)
	segs := e.segments(testTopic)
	if len(segs) < 3 {
		t.Fatalf("%d segments", len(segs))
	}
	old, err := os.Stat(segs[0])
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(segs[0])

	l.TrimBefore(l.Next(first[len(first)-1]))
	spare := waitForFiles(t, dir, "*"+spareSuffix, 1)[0]
	if fi, err := os.Stat(spare); err != nil || !os.SameFile(fi, old) && fi.Size() == 0 {
		t.Fatalf("spare %s: %v", spare, err)
	}
	spareInfo, _ := os.Stat(spare)

	// Fill the open segment and roll into the spare, then write a little there: the rest of
	// the file is the older ledger's records.
	perSegment, inOpen := segmentFill(first)
	more := sameSize(t, l, 20, perSegment-inOpen+3)
	segs = e.segments(testTopic)
	newest := segs[len(segs)-1]
	fi, err := os.Stat(newest)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(fi, spareInfo) {
		ls, _ := filepath.Glob(filepath.Join(dir, "*"))
		t.Fatalf("the rollover created %s instead of reusing %s (files: %q; appended at %v)", filepath.Base(newest), filepath.Base(spare), ls, more)
	}
	if more[len(more)-1].Ledger != ledgerOf(t, newest) || more[len(more)-1].Entry >= first[len(first)-1].Entry {
		t.Fatalf("last entry %v; the recycled file should hold only a few", more[len(more)-1])
	}
	if fi.Size() <= segHeaderSize+int64(more[len(more)-1].Entry+1)*int64(recordSize(&Meta{}, make([]byte, 500))) {
		t.Fatalf("recycled file is %d bytes: nothing of the older ledger left behind to test", fi.Size())
	}
	want := readAll(t, l)
	check := func(when string, got []Entry) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d entries, want %d (last %v)", when, len(got), len(want), got[len(got)-1].Pos)
		}
		for i := range got {
			if got[i].Pos != want[i].Pos || !bytes.Equal(got[i].Data, want[i].Data) {
				t.Fatalf("%s: entry %d is %v %.20q, want %v %.20q", when, i, got[i].Pos, got[i].Data, want[i].Pos, want[i].Data)
			}
		}
	}
	check("while running", want)

	// A crash now: the recycled open segment still has the older ledger's records behind its
	// own. Recovery cuts them and serves exactly what was written.
	crash := t.TempDir()
	copyDir(t, e.dir, crash)
	os.Remove(filepath.Join(crash, "LOCK"))
	cs, err := OpenFileStore(crash, FileStoreOptions{SegmentSize: 4096, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := cs.OpenLog(testTopic)
	if err != nil {
		t.Fatal(err)
	}
	check("after a crash", readAll(t, cl))
	cs.Close()

	// A clean stop cuts the recycled segment to its end: nothing to cut on the next start.
	e.reopen()
	check("after a clean restart", readAll(t, e.log(testTopic)))
	if strings.Contains(e.logs.String(), "cut") || strings.Contains(e.logs.String(), "corrupt") {
		t.Errorf("a clean restart cut something:\n%s", e.logs)
	}
}

// A spare that no rollover takes is deleted after a while: a quiet topic gives its disk back.
func TestFileSpareExpires(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{SegmentSize: 4096})
	l := e.log(testTopic)
	sameSize(t, l, 0, 20)
	l.TrimBefore(l.Next(l.Last()))
	dir := filepath.Dir(e.segments(testTopic)[0])
	waitForFiles(t, dir, "*"+spareSuffix, 1)
	waitForFiles(t, dir, "*"+spareSuffix, 0)
	waitForFiles(t, dir, "*", 1)
}

// Segments written before files were recycled (format version 1, no ledger id in the
// checksums) are still served.
func TestFileReadsVersion1Segments(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{})
	l := e.log(testTopic)
	ps := fill(t, l, 0, 5)
	e.s.Close()

	// Rewrite the segment as version 1 wrote it.
	path := e.segments(testTopic)[0]
	ledger := ledgerOf(t, path)
	v1 := append([]byte(segMagicV1), binary.LittleEndian.AppendUint64(nil, uint64(ledger))...)
	for i := range 5 {
		v1 = appendRecord(v1, 0, int64(i), ptr(testMeta(i)), testData(i))
	}
	if err := os.WriteFile(path, v1, 0o644); err != nil {
		t.Fatal(err)
	}

	e.open()
	got := readAll(t, e.log(testTopic))
	if len(got) != 5 {
		t.Fatalf("%d entries of a version 1 segment", len(got))
	}
	for i, en := range got {
		if en.Pos != ps[i] {
			t.Errorf("entry %d at %v, want %v", i, en.Pos, ps[i])
		}
		checkEntry(t, en, i)
	}
	if strings.Contains(e.logs.String(), "corrupt") || strings.Contains(e.logs.String(), "cut") {
		t.Errorf("recovery complained:\n%s", e.logs)
	}
	// A version 2 record does not pass as a version 1 one, nor the other way round.
	rec := appendRecord(nil, recordSeed(ledger), 0, ptr(testMeta(0)), testData(0))
	if _, _, err := checkRecord(rec, 0); !errors.Is(err, errCorrupt) {
		t.Errorf("a version 2 record passes the version 1 check: %v", err)
	}
	if _, _, err := checkRecord(rec, recordSeed(ledger+1)); !errors.Is(err, errCorrupt) {
		t.Errorf("a record passes another ledger's check: %v", err)
	}
}

// A rollover that cannot reuse the spare (a failing disk) fails its entries like any failed
// write, deletes the spare, and leaves nothing that a restart would take for a damaged segment.
func TestFileSpareReuseFails(t *testing.T) {
	t.Parallel()
	ffs := &FaultFS{}
	e := newFileEnv(t, FileStoreOptions{SegmentSize: 4096, FS: ffs})
	l := e.log(testTopic)
	first := sameSize(t, l, 0, 20)
	l.TrimBefore(l.Next(first[len(first)-1]))
	dir := filepath.Dir(e.segments(testTopic)[0])
	waitForFiles(t, dir, "*"+spareSuffix, 1)

	// Fill the open segment, then fail every sync: the next append needs a rollover.
	perSegment, inOpen := segmentFill(first)
	sameSize(t, l, 20, perSegment-inOpen)
	ffs.FailSyncs(syscall.EIO)
	errc := make(chan error, 1)
	l.Append(Meta{}, make([]byte, 500), nil, func(_ Position, err error) { errc <- err })
	if err := <-errc; err == nil {
		t.Fatal("an append whose rollover could not sync succeeded")
	}
	ffs.Heal()
	after := mustAppend(t, l, Meta{PublishTime: 99}, fmt.Appendf(nil, "%0500d", 99))
	waitForFiles(t, dir, "*"+spareSuffix, 0)
	want := readAll(t, l)
	if got := want[len(want)-1]; got.Pos != after {
		t.Fatalf("last entry %v, want %v", got.Pos, after)
	}

	e.reopen()
	got := readAll(t, e.log(testTopic))
	if len(got) != len(want) || got[len(got)-1].Pos != after {
		t.Errorf("after restart: %d entries up to %v, want %d up to %v", len(got), got[len(got)-1].Pos, len(want), after)
	}
	if strings.Contains(e.logs.String(), "sealed segment") || strings.Contains(e.logs.String(), "header") {
		t.Errorf("the restart found damage:\n%s", e.logs)
	}
}
