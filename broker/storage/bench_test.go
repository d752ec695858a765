package storage

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkFileLogAppend: 1 KiB entries from concurrent appenders, each waiting for its done
// (fsync on) before appending again, as producers waiting for receipts do. entries/sync shows
// group commit at work.
func BenchmarkFileLogAppend(b *testing.B) {
	for _, n := range []int{1, 16, 128} {
		b.Run(fmt.Sprintf("appenders=%d", n), func(b *testing.B) { benchAppend(b, n) })
	}
}

func benchAppend(b *testing.B, appenders int) {
	ffs := &FaultFS{} // no faults: only counts syncs
	s, err := OpenFileStore(b.TempDir(), FileStoreOptions{FS: ffs})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	l, err := s.OpenLog(testTopic)
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 1024)
	meta := Meta{PublishTime: time.Now().UnixMilli(), NumMessages: 1, ProducerName: "bench"}
	b.SetBytes(int64(len(data)))
	syncs0 := ffs.Syncs()
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range appenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := make(chan error, 1)
			cb := func(_ Position, err error) { done <- err }
			for left.Add(-1) >= 0 {
				l.Append(meta, data, nil, cb)
				if err := <-done; err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	if n := ffs.Syncs() - syncs0; n > 0 {
		b.ReportMetric(float64(b.N)/float64(n), "entries/sync")
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "entries/s")
}

// buildLog writes about mb MiB of 1 KiB entries to testTopic in dir (without fsync, which
// would only make building slow) and returns the bytes of segment files written.
func buildLog(tb testing.TB, dir string, mb int) int64 {
	tb.Helper()
	s, err := OpenFileStore(dir, FileStoreOptions{NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	l, err := s.OpenLog(testTopic)
	if err != nil {
		tb.Fatal(err)
	}
	data := make([]byte, 1024)
	n := mb << 10
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		meta := Meta{PublishTime: int64(i), NumMessages: 1, ProducerName: "bench", SequenceID: uint64(i)}
		l.Append(meta, data, nil, func(_ Position, err error) {
			if err != nil {
				tb.Error(err)
			}
			wg.Done()
		})
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	return dirSize(tb, dir)
}

func dirSize(tb testing.TB, dir string) int64 {
	var total int64
	name, _ := escapeTopic(testTopic)
	des, err := os.ReadDir(dir + "/topics/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	for _, de := range des {
		fi, err := de.Info()
		if err != nil {
			tb.Fatal(err)
		}
		total += fi.Size()
	}
	return total
}

// BenchmarkFileLogRecovery opens a store whose one topic holds a large log (1 GiB by default;
// LETTERBOX_RECOVERY_MB sets it) and recovers it: every record read and checksummed, the index
// rebuilt. The page cache is warm after the first round unless LETTERBOX_RECOVERY_COLD is set.
func BenchmarkFileLogRecovery(b *testing.B) {
	mb := 1024
	if v, err := strconv.Atoi(os.Getenv("LETTERBOX_RECOVERY_MB")); err == nil && v > 0 {
		mb = v
	}
	dir := b.TempDir()
	size := buildLog(b, dir, mb)
	b.SetBytes(size)
	// LETTERBOX_RECOVERY_COLD=1 (as root) drops the page cache before each round, to measure
	// recovery from the disk rather than from memory.
	cold := os.Getenv("LETTERBOX_RECOVERY_COLD") == "1"
	b.ResetTimer()
	for range b.N {
		if cold {
			b.StopTimer()
			if err := dropCaches(); err != nil {
				b.Fatalf("dropping the page cache: %v", err)
			}
			b.StartTimer()
		}
		s, err := OpenFileStore(dir, FileStoreOptions{})
		if err != nil {
			b.Fatal(err)
		}
		l, err := s.OpenLog(testTopic)
		if err != nil {
			b.Fatal(err)
		}
		if l.Entries() != int64(mb<<10) {
			b.Fatalf("recovered %d entries, wrote %d", l.Entries(), mb<<10)
		}
		s.Close()
	}
}

// TestFileRecoveryLargeLog recovers a log of several segments in full (no timing asserted).
func TestFileRecoveryLargeLog(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short")
	}
	dir := t.TempDir()
	buildLog(t, dir, 16)
	s, err := OpenFileStore(dir, FileStoreOptions{SegmentSize: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, _ := s.OpenLog(testTopic)
	if l.Entries() != 16<<10 {
		t.Fatalf("recovered %d entries", l.Entries())
	}
	got, err := l.Read(l.FindByTime(1000), 10)
	if err != nil || len(got) != 10 || got[0].Meta.SequenceID != 1000 {
		t.Fatalf("FindByTime after recovery: %v %v", got, err)
	}
}
