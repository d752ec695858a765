package storage

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// The conformance tests run against both stores through the Store and Log interfaces: whatever
// the broker sees of one it must see of the other.

type storeMaker struct {
	name string
	open func(t *testing.T) Store
}

func storeMakers() []storeMaker {
	return []storeMaker{
		{"memory", func(t *testing.T) Store { return NewMemoryStore() }},
		{"file", func(t *testing.T) Store {
			s, err := OpenFileStore(t.TempDir(), FileStoreOptions{Logger: testLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}},
	}
}

func forEachStore(t *testing.T, fn func(t *testing.T, s Store)) {
	for _, m := range storeMakers() {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			fn(t, m.open(t))
		})
	}
}

const waitFor = 10 * time.Second

// appendSync appends and waits for done.
func appendSync(t *testing.T, l Log, meta Meta, data []byte) (Position, error) {
	t.Helper()
	type res struct {
		p   Position
		err error
	}
	ch := make(chan res, 1)
	l.Append(meta, data, nil, func(p Position, err error) { ch <- res{p, err} })
	select {
	case r := <-ch:
		return r.p, r.err
	case <-time.After(waitFor):
		t.Fatal("append: done not called")
		return Position{}, nil
	}
}

func mustAppend(t *testing.T, l Log, meta Meta, data []byte) Position {
	t.Helper()
	p, err := appendSync(t, l, meta, data)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	return p
}

func testMeta(i int) Meta {
	return Meta{
		PublishTime:  int64(1000 + 100*i),
		NumMessages:  int32(1 + i%3),
		Batched:      i%2 == 1,
		DeliverAt:    int64(i * 7),
		Key:          fmt.Sprintf("key-%d", i%4),
		ProducerName: "producer-a",
		SequenceID:   uint64(i),
	}
}

func testData(i int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, 10+i) }

// fill appends n entries made by testMeta/testData, checking done order and positions.
func fill(t *testing.T, l Log, from, n int) []Position {
	t.Helper()
	var mu sync.Mutex
	var got []Position
	var wg sync.WaitGroup
	wg.Add(n)
	for i := from; i < from+n; i++ {
		l.Append(testMeta(i), testData(i), nil, func(p Position, err error) {
			if err != nil {
				t.Errorf("append %d: %v", i, err)
			}
			mu.Lock()
			got = append(got, p)
			mu.Unlock()
			wg.Done()
		})
	}
	waitGroup(t, &wg)
	for i := 1; i < len(got); i++ {
		if !got[i-1].Less(got[i]) {
			t.Fatalf("done out of order: %v then %v", got[i-1], got[i])
		}
	}
	return got
}

func waitGroup(t *testing.T, wg *sync.WaitGroup) {
	t.Helper()
	ch := make(chan struct{})
	go func() { wg.Wait(); close(ch) }()
	select {
	case <-ch:
	case <-time.After(waitFor):
		t.Fatal("timed out waiting for callbacks")
	}
}

func checkEntry(t *testing.T, e Entry, i int) {
	t.Helper()
	if e.Meta != testMeta(i) {
		t.Errorf("entry %v meta = %+v, want %+v", e.Pos, e.Meta, testMeta(i))
	}
	if !bytes.Equal(e.Data, testData(i)) {
		t.Errorf("entry %v data = %q, want %q", e.Pos, e.Data, testData(i))
	}
}

func TestConformanceEmpty(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		l, err := s.OpenLog("persistent://public/default/empty")
		if err != nil {
			t.Fatal(err)
		}
		last := l.Last()
		if last.Entry != -1 {
			t.Errorf("Last = %v, want entry -1", last)
		}
		if f := l.First(); f != l.Next(last) || f != (Position{last.Ledger, 0}) {
			t.Errorf("First = %v, Next(Last) = %v", f, l.Next(last))
		}
		if got, err := l.Read(l.First(), 10); err != nil || len(got) != 0 {
			t.Errorf("Read = %v, %v", got, err)
		}
		if p := l.FindByTime(0); p != l.First() {
			t.Errorf("FindByTime = %v, want %v", p, l.First())
		}
		if l.Entries() != 0 || l.Size() != 0 {
			t.Errorf("Entries, Size = %d, %d", l.Entries(), l.Size())
		}
		if _, ok := l.Get(Position{last.Ledger, 0}); ok {
			t.Error("Get on empty log found something")
		}
	})
}

func TestConformanceAppendRead(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		l, err := s.OpenLog("persistent://public/default/t")
		if err != nil {
			t.Fatal(err)
		}
		ps := fill(t, l, 0, 10)
		L := ps[0].Ledger
		var size int64
		for i, p := range ps {
			if p != (Position{L, int64(i)}) {
				t.Fatalf("position %d = %v", i, p)
			}
			size += int64(len(testData(i)))
		}
		if l.First() != ps[0] || l.Last() != ps[9] {
			t.Errorf("First, Last = %v, %v", l.First(), l.Last())
		}
		if l.Entries() != 10 || l.Size() != size {
			t.Errorf("Entries, Size = %d, %d; want 10, %d", l.Entries(), l.Size(), size)
		}
		for from, want := range map[Position]int64{{L, -1}: 10, {L - 1, 5}: 10, ps[0]: 10, ps[4]: 6, ps[9]: 1, {L, 10}: 0, {L + 1, 0}: 0} {
			if got := l.EntriesFrom(from); got != want {
				t.Errorf("EntriesFrom(%v) = %d, want %d", from, got, want)
			}
		}
		got, err := l.Read(ps[0], 100)
		if err != nil || len(got) != 10 {
			t.Fatalf("Read = %d entries, %v", len(got), err)
		}
		for i, e := range got {
			if e.Pos != ps[i] {
				t.Errorf("Read[%d].Pos = %v", i, e.Pos)
			}
			checkEntry(t, e, i)
			g, ok := l.Get(ps[i])
			if !ok {
				t.Fatalf("Get(%v) missing", ps[i])
			}
			checkEntry(t, g, i)
		}
		for i := 0; i < 9; i++ {
			if n := l.Next(ps[i]); n != ps[i+1] {
				t.Errorf("Next(%v) = %v", ps[i], n)
			}
		}
		if n := l.Next(ps[9]); n != (Position{L, 10}) {
			t.Errorf("Next(last) = %v", n)
		}
		if n := l.Next(Position{L - 1, 5}); n != (Position{L, 0}) {
			t.Errorf("Next(earlier ledger) = %v", n)
		}
		// Clamping.
		reads := []struct {
			from  Position
			max   int
			first int // -1: none
			n     int
		}{
			{Position{L, -1}, 100, 0, 10},
			{Position{L - 1, 5}, 100, 0, 10},
			{Position{L, 3}, 4, 3, 4},
			{Position{L, 9}, 4, 9, 1},
			{Position{L, 10}, 4, -1, 0},
			{Position{L, 1000}, 4, -1, 0},
			{Position{L + 1000, 0}, 4, -1, 0},
			{Position{L, 0}, 0, -1, 0},
		}
		for _, r := range reads {
			got, err := l.Read(r.from, r.max)
			if err != nil || len(got) != r.n {
				t.Errorf("Read(%v, %d) = %d entries, %v; want %d", r.from, r.max, len(got), err, r.n)
				continue
			}
			if r.n > 0 && got[0].Pos != ps[r.first] {
				t.Errorf("Read(%v, %d) starts at %v", r.from, r.max, got[0].Pos)
			}
		}
		if _, ok := l.Get(Position{L, 10}); ok {
			t.Error("Get past the end found something")
		}
	})
}

func TestConformanceFindByTime(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		l, _ := s.OpenLog("persistent://public/default/t")
		ps := fill(t, l, 0, 10) // publish times 1000, 1100, … 1900
		cases := []struct {
			ms   int64
			want Position
		}{
			{0, ps[0]}, {1000, ps[0]}, {1001, ps[1]}, {1150, ps[2]}, {1900, ps[9]},
			{1901, l.Next(ps[9])}, {1 << 40, l.Next(ps[9])},
		}
		for _, c := range cases {
			if got := l.FindByTime(c.ms); got != c.want {
				t.Errorf("FindByTime(%d) = %v, want %v", c.ms, got, c.want)
			}
		}
	})
}

// Trimming frees whole units (Memory's chunks, FileLog's segments), so the conformance test
// checks what holds for both: nothing at or after p goes, what went is gone, the counters agree
// with what is readable, and appends go on after the last position.
func TestConformanceTrim(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		l, _ := s.OpenLog("persistent://public/default/t")
		ps := fill(t, l, 0, 10)
		L := ps[0].Ledger
		check := func(e Entry) { checkEntry(t, e, int(e.Pos.Entry)) }
		l.TrimBefore(ps[4])
		checkTrimmed(t, l, ps, 4, check)
		l.TrimBefore(ps[2]) // backwards
		checkTrimmed(t, l, ps, 4, check)
		l.TrimBefore(Position{L + 1000, 0})
		checkTrimmed(t, l, ps, 10, check)
		if l.Last() != ps[9] {
			t.Errorf("Last after trimming all = %v", l.Last())
		}
		p := mustAppend(t, l, testMeta(10), testData(10))
		if p != l.Next(ps[9]) || l.Last() != p {
			t.Errorf("append after trimming all: %v, Last %v", p, l.Last())
		}
		if got, _ := l.Get(p); !bytes.Equal(got.Data, testData(10)) {
			t.Errorf("Get(%v) after trimming all = %q", p, got.Data)
		}
	})
}

// checkTrimmed checks l after TrimBefore(ps[upTo]) (upTo == len(ps): trimmed past the end);
// check, if not nil, checks each entry still stored.
func checkTrimmed(t *testing.T, l Log, ps []Position, upTo int, check func(Entry)) {
	t.Helper()
	first := l.First()
	if upTo < len(ps) && ps[upTo].Less(first) {
		t.Errorf("First = %v after trimming before %v", first, ps[upTo])
	}
	all, err := l.Read(ps[0], 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) > 0 && all[0].Pos != first {
		t.Errorf("Read from the start begins at %v, First is %v", all[0].Pos, first)
	}
	if len(all) < len(ps)-upTo {
		t.Errorf("trimming before entry %d left %d entries", upTo, len(all))
	}
	var size int64
	for _, e := range all {
		size += int64(len(e.Data))
		if check != nil {
			check(e)
		}
	}
	if l.Entries() != int64(len(all)) || l.Size() != size {
		t.Errorf("Entries, Size = %d, %d; readable %d, %d", l.Entries(), l.Size(), len(all), size)
	}
	for _, p := range ps {
		_, ok := l.Get(p)
		if want := !p.Less(first); ok != want {
			t.Errorf("Get(%v) = %v with First %v", p, ok, first)
		}
	}
	if len(all) == 0 && first != l.Next(l.Last()) {
		t.Errorf("nothing stored: First %v, Next(Last) %v", first, l.Next(l.Last()))
	}
}

func TestConformanceLogs(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		names := []string{"persistent://public/default/a", "persistent://x/y/odd name%/..", ".hidden"}
		ledgers := map[int64]bool{}
		for _, n := range names {
			l, err := s.OpenLog(n)
			if err != nil {
				t.Fatal(err)
			}
			p := mustAppend(t, l, testMeta(0), testData(0))
			if ledgers[p.Ledger] {
				t.Errorf("ledger %d used by two topics", p.Ledger)
			}
			ledgers[p.Ledger] = true
			if again, _ := s.OpenLog(n); again != l {
				t.Errorf("OpenLog(%q) twice gave two logs", n)
			}
		}
		got, err := s.Logs()
		want := slices.Sorted(slices.Values(names))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Logs = %q, %v; want %q", got, err, want)
		}
		l, _ := s.OpenLog(names[0])
		l.Close()
		if err := s.DeleteLog(names[0]); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Logs(); slices.Contains(got, names[0]) {
			t.Errorf("Logs after DeleteLog = %q", got)
		}
		l, err = s.OpenLog(names[0])
		if err != nil || l.Entries() != 0 {
			t.Fatalf("reopened deleted log: %v, %d entries", err, l.Entries())
		}
		p := mustAppend(t, l, testMeta(0), testData(0))
		if ledgers[p.Ledger] {
			t.Errorf("ledger %d reused after DeleteLog", p.Ledger)
		}
	})
}

func TestConformanceClosed(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		l, _ := s.OpenLog("persistent://public/default/t")
		fill(t, l, 0, 3)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := appendSync(t, l, testMeta(0), nil); !errors.Is(err, ErrClosed) {
			t.Errorf("Append after Close: %v", err)
		}
		if _, err := l.Read(Position{}, 10); !errors.Is(err, ErrClosed) {
			t.Errorf("Read after Close: %v", err)
		}
		l2, err := s.OpenLog("persistent://public/default/t")
		if err != nil || l2 == l {
			t.Fatalf("OpenLog after Close: %v (same log: %v)", err, l2 == l)
		}
		mustAppend(t, l2, testMeta(0), nil)
	})
}

func TestConformanceConcurrentAppends(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		l, _ := s.OpenLog("persistent://public/default/t")
		const writers, each = 8, 100
		var mu sync.Mutex
		var order []Position
		var wg sync.WaitGroup
		wg.Add(writers * each)
		for w := range writers {
			go func() {
				for i := range each {
					// Appends are sequenced under mu so done order can be compared to append order.
					mu.Lock()
					l.Append(testMeta(i), testData(w), nil, func(p Position, err error) {
						if err != nil {
							t.Error(err)
						}
						order = append(order, p)
						wg.Done()
					})
					mu.Unlock()
				}
			}()
		}
		waitGroup(t, &wg)
		mu.Lock()
		defer mu.Unlock()
		for i := 1; i < len(order); i++ {
			if !order[i-1].Less(order[i]) {
				t.Fatalf("done out of order at %d: %v then %v", i, order[i-1], order[i])
			}
		}
		got, err := l.Read(l.First(), 10000)
		if err != nil || len(got) != writers*each || l.Entries() != writers*each {
			t.Errorf("Read %d entries (%v), Entries %d", len(got), err, l.Entries())
		}
	})
}

func TestConformanceMetadata(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		md := s.Metadata()
		if _, ok, err := md.Get(BucketTopics, "nope"); ok || err != nil {
			t.Errorf("Get from missing bucket: %v, %v", ok, err)
		}
		err := md.Update(func(tx MetadataTx) error {
			for _, k := range []string{"t/b", "t/a", "u/a", "t/c"} {
				if err := tx.Put(BucketCursors, k, []byte("v"+k)); err != nil {
					return err
				}
			}
			if v, ok := tx.Get(BucketCursors, "t/a"); !ok || string(v) != "vt/a" {
				t.Errorf("tx does not see its own put: %q %v", v, ok)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		md.Scan(BucketCursors, "t/", func(k string, v []byte) bool {
			keys = append(keys, k)
			if string(v) != "v"+k {
				t.Errorf("Scan %q = %q", k, v)
			}
			return true
		})
		if !slices.Equal(keys, []string{"t/a", "t/b", "t/c"}) {
			t.Errorf("Scan keys = %q", keys)
		}
		keys = nil
		md.Scan(BucketCursors, "", func(k string, v []byte) bool { keys = append(keys, k); return len(keys) < 2 })
		if !slices.Equal(keys, []string{"t/a", "t/b"}) {
			t.Errorf("Scan stopping early = %q", keys)
		}

		// A failing Update changes nothing.
		boom := errors.New("boom")
		err = md.Update(func(tx MetadataTx) error {
			tx.Put(BucketCursors, "t/a", []byte("changed"))
			tx.Put(BucketTenants, "new", []byte("x"))
			tx.Delete(BucketCursors, "t/b")
			tx.DeletePrefix(BucketCursors, "u/")
			return boom
		})
		if !errors.Is(err, boom) {
			t.Errorf("Update error = %v", err)
		}
		if v, _, _ := md.Get(BucketCursors, "t/a"); string(v) != "vt/a" {
			t.Errorf("failed Update changed t/a to %q", v)
		}
		for _, k := range []string{"t/b", "u/a"} {
			if _, ok, _ := md.Get(BucketCursors, k); !ok {
				t.Errorf("failed Update deleted %q", k)
			}
		}
		if _, ok, _ := md.Get(BucketTenants, "new"); ok {
			t.Error("failed Update created a key")
		}

		err = md.Update(func(tx MetadataTx) error {
			tx.DeletePrefix(BucketCursors, "t/")
			if _, ok := tx.Get(BucketCursors, "t/c"); ok {
				t.Error("tx sees a key it deleted")
			}
			return tx.Delete(BucketCursors, "missing")
		})
		if err != nil {
			t.Fatal(err)
		}
		keys = nil
		md.Scan(BucketCursors, "", func(k string, _ []byte) bool { keys = append(keys, k); return true })
		if !slices.Equal(keys, []string{"u/a"}) {
			t.Errorf("after DeletePrefix: %q", keys)
		}
	})
}

// TestConformanceLedgers: the ledgers cover exactly the stored entries, the current one last.
func TestConformanceLedgers(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		l, _ := s.OpenLog("persistent://public/default/ledgers")
		if ls := l.Ledgers(); len(ls) != 1 || ls[0].Entries != 0 || ls[0].ID != l.Last().Ledger {
			t.Errorf("empty log: ledgers %+v, Last %v", ls, l.Last())
		}
		ps := fill(t, l, 0, 10)
		covered := func() []Position {
			var out []Position
			for _, li := range l.Ledgers() {
				for e := li.First; e < li.First+li.Entries; e++ {
					out = append(out, Position{li.ID, e})
				}
			}
			return out
		}
		if got := covered(); !slices.Equal(got, ps) {
			t.Errorf("ledgers cover %v, want %v", got, ps)
		}
		l.TrimBefore(Position{ps[9].Ledger + 1000, 0})
		for _, p := range covered() {
			if _, ok := l.Get(p); !ok {
				t.Errorf("after trimming: ledgers cover %v, which is not stored", p)
			}
		}
		if ls := l.Ledgers(); ls[len(ls)-1].ID != l.Last().Ledger {
			t.Errorf("after trimming: last ledger %+v, Last %v", ls[len(ls)-1], l.Last())
		}
	})
}

// ReadHeld appends to the slice it is given, which it leaves as it was, whatever its room.
func TestConformanceReadHeldAppends(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		l, err := s.OpenLog("persistent://public/default/t")
		if err != nil {
			t.Fatal(err)
		}
		ps := fill(t, l, 0, 10)
		for _, room := range []int{0, 2, 16} {
			dst := make([]Entry, 1, 1+room)
			dst[0] = Entry{Pos: Position{Ledger: -7}}
			got, err := l.ReadHeld(dst, ps[3], 5)
			if err != nil || len(got) != 6 || got[0].Pos.Ledger != -7 {
				t.Fatalf("room %d: ReadHeld = %d entries (first %v), %v; want the one given and 5", room, len(got), got[0].Pos, err)
			}
			for k, e := range got[1:] {
				if e.Pos != ps[3+k] {
					t.Errorf("room %d: entry %d at %v, want %v", room, k, e.Pos, ps[3+k])
				}
				checkEntry(t, e, 3+k)
				if e.Hold != nil {
					e.Hold.Release()
				}
			}
			if got, err := l.ReadHeld(dst[:1], Position{Ledger: ps[9].Ledger, Entry: 10}, 5); err != nil || len(got) != 1 {
				t.Errorf("room %d: ReadHeld past the end = %d entries, %v; want the one given", room, len(got), err)
			}
		}
	})
}
