package storage

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/internal/testwait"
)

// fillTopics writes n entries to each of topics logs, one sealed segment per entry (a rollover
// after every entry), and returns each log's positions.
func fillTopics(t *testing.T, e *fileEnv, topics, n int) map[string][]Position {
	t.Helper()
	out := make(map[string][]Position, topics)
	for k := range topics {
		topic := fmt.Sprintf("persistent://public/default/t%d", k)
		out[topic] = fill(t, e.log(topic), 0, n)
	}
	return out
}

// With a bound of 8 open files, 100 topics of 10 sealed segments each are written, reopened
// and read back whole, by 8 readers at once: every entry comes back, and the store never had
// more than 8 segment files open.
func TestFileCacheBoundsOpenSegments(t *testing.T) {
	t.Parallel()
	const bound = 8
	e := newFileEnv(t, FileStoreOptions{OpenFiles: bound, NoSync: true,
		Rollover: Rollover{MaxEntries: 1, MinAge: -1}})
	written := fillTopics(t, e, 100, 10)
	e.reopen()
	topics := make(chan string, len(written))
	for topic := range written {
		topics <- topic
	}
	close(topics)
	var wg sync.WaitGroup
	for range bound {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for topic := range topics {
				l, err := e.s.OpenLog(topic)
				if err != nil {
					t.Error(err)
					return
				}
				got, err := l.Read(Position{}, 100)
				if err != nil || len(got) != 10 {
					t.Errorf("%s: read %d entries, %v", topic, len(got), err)
					continue
				}
				for i, en := range got {
					if en.Pos != written[topic][i] {
						t.Errorf("%s: entry %d at %v, written at %v", topic, i, en.Pos, written[topic][i])
					}
					checkEntry(t, en, i)
				}
			}
		}()
	}
	wg.Wait()
	if _, peak := e.s.OpenFiles(); peak > bound {
		t.Errorf("%d segment files open at once, bound %d", peak, bound)
	}
}

// Files unused for FileIdle are closed, the open segments' too; reads and appends open them
// again.
func TestFileCacheClosesIdleFiles(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{FileIdle: 20 * time.Millisecond, Rollover: Rollover{MaxEntries: 2, MinAge: -1}})
	l := e.log(testTopic)
	ps := fill(t, l, 0, 5)
	testwait.ForNil(t, waitFor, "idle segment files closed", func() error {
		if now, _ := e.s.OpenFiles(); now != 0 {
			return fmt.Errorf("%d segment files still open after the last use", now)
		}
		return nil
	})
	got := readAll(t, l)
	if len(got) != 5 {
		t.Fatalf("read %d entries after the files were closed, want 5", len(got))
	}
	for i, en := range got {
		checkEntry(t, en, i)
	}
	p := mustAppend(t, l, testMeta(5), testData(5))
	if !ps[4].Less(p) {
		t.Fatalf("appended at %v after %v", p, ps[4])
	}
	if en, ok := l.Get(p); !ok {
		t.Fatalf("Get(%v) after an append to a closed file: not found", p)
	} else {
		checkEntry(t, en, 5)
	}
}

// A caller that finds every file in use waits for one: with a bound of 1, readers of two logs
// and the writer of a third take turns, and all of them finish.
func TestFileCacheWaitsForAFile(t *testing.T) {
	t.Parallel()
	e := newFileEnv(t, FileStoreOptions{OpenFiles: 1, NoSync: true, TailCache: -1,
		Rollover: Rollover{MaxEntries: 3, MinAge: -1}})
	a, b, w := e.log("persistent://public/default/a"), e.log("persistent://public/default/b"), e.log("persistent://public/default/w")
	fill(t, a, 0, 9)
	fill(t, b, 0, 9)
	var wg sync.WaitGroup
	for _, l := range []Log{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if got, err := l.Read(Position{}, 100); err != nil || len(got) != 9 {
					t.Errorf("read %d entries, %v", len(got), err)
					return
				}
			}
		}()
	}
	fill(t, w, 0, 30)
	wg.Wait()
	if _, peak := e.s.OpenFiles(); peak > 1 {
		t.Errorf("%d segment files open at once, bound 1", peak)
	}
	if got := readAll(t, w); len(got) != 30 {
		t.Errorf("the writer's log holds %d entries, want 30", len(got))
	}
}
