package storage

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestFileSurvivesSIGKILL runs a child process (this test binary) that appends as fast as it
// can and prints each acknowledged position; the parent SIGKILLs it at a random moment, five
// rounds on one directory, and checks that every acknowledged entry is there, at the position
// it was acknowledged with, in order.
func TestFileSurvivesSIGKILL(t *testing.T) { killRounds(t, false) }

// TestFileSurvivesSIGKILLWhileTrimming is TestFileSurvivesSIGKILL with a child that trims as it
// goes, so that segment files are deleted and recycled while it is killed: every acknowledged
// entry after the last trim is there, and nothing an older ledger left in a recycled file is
// served.
func TestFileSurvivesSIGKILLWhileTrimming(t *testing.T) { killRounds(t, true) }

func killRounds(t *testing.T, trim bool) {
	if testing.Short() {
		t.Skip("short")
	}
	dir := t.TempDir()
	var trimmed Position // the highest position the child trimmed before
	type ack struct {
		pos Position
		seq uint64
	}
	var acked []ack
	for round := range 5 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFileKillChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "LETTERBOX_KILL_CHILD_DIR="+dir, fmt.Sprintf("LETTERBOX_KILL_CHILD_SEQ=%d", round*1_000_000),
			fmt.Sprintf("LETTERBOX_KILL_CHILD_TRIM=%t", trim))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		killAt := time.Duration(20+rand.IntN(200)) * time.Millisecond
		var timer <-chan time.Time
		armed := false
		arm := func() {
			if !armed {
				armed = true
				timer = time.After(killAt)
			}
		}
		deadline := time.After(waitFor)
		n := 0
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break read
				}
				var p Position
				if _, err := fmt.Sscanf(l, "TRIM %d %d", &p.Ledger, &p.Entry); err == nil {
					if trimmed.Less(p) {
						trimmed = p
					}
					if trim {
						arm() // a kill that can find trimming under way
					}
					continue
				}
				var a ack
				if _, err := fmt.Sscanf(l, "ACK %d %d %d", &a.pos.Ledger, &a.pos.Entry, &a.seq); err != nil {
					continue
				}
				acked = append(acked, a)
				if n++; !trim {
					arm()
				}
			case <-timer:
				cmd.Process.Kill()
				timer = nil
			case <-deadline:
				cmd.Process.Kill()
				t.Fatal("child did not start appending")
			}
		}
		cmd.Wait()
		t.Logf("round %d: %d acknowledged so far", round, len(acked))
		if n == 0 {
			t.Fatalf("round %d: nothing acknowledged", round)
		}
	}

	logs := &logBuffer{}
	s, err := OpenFileStore(dir, FileStoreOptions{Logger: testLoggerTo(logs)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l, _ := s.OpenLog(testTopic)
	all := readAll(t, l)
	bySeq := make(map[uint64]Entry, len(all))
	for i, e := range all {
		if i > 0 && e.Meta.SequenceID <= all[i-1].Meta.SequenceID {
			t.Fatalf("out of order: seq %d after %d", e.Meta.SequenceID, all[i-1].Meta.SequenceID)
		}
		if string(e.Data) != killData(e.Meta.SequenceID) {
			t.Fatalf("entry at %v has seq %d and data %q", e.Pos, e.Meta.SequenceID, e.Data)
		}
		bySeq[e.Meta.SequenceID] = e
	}
	for _, a := range acked {
		if a.pos.Less(trimmed) {
			continue
		}
		e, ok := bySeq[a.seq]
		if !ok {
			t.Fatalf("acknowledged seq %d at %v is missing", a.seq, a.pos)
		}
		if e.Pos != a.pos || string(e.Data) != killData(a.seq) {
			t.Fatalf("acknowledged seq %d at %v is at %v with %q", a.seq, a.pos, e.Pos, e.Data)
		}
	}
	if strings.Contains(logs.String(), "sealed segment") {
		t.Errorf("damage in a sealed segment:\n%s", logs)
	}
	t.Logf("%d acknowledged, %d stored, trimmed up to %v", len(acked), len(all), trimmed)
	if trim && trimmed == (Position{}) {
		t.Error("the child never trimmed")
	}
}

func killData(seq uint64) string {
	return fmt.Sprintf("entry %d %s", seq, strings.Repeat("x", int(seq%200)))
}

// TestFileKillChild is the child of TestFileSurvivesSIGKILL; it does nothing on its own.
func TestFileKillChild(t *testing.T) {
	dir := os.Getenv("LETTERBOX_KILL_CHILD_DIR")
	if dir == "" {
		t.Skip("run by TestFileSurvivesSIGKILL")
	}
	var base uint64
	fmt.Sscan(os.Getenv("LETTERBOX_KILL_CHILD_SEQ"), &base)
	s, err := OpenFileStore(dir, FileStoreOptions{SegmentSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.OpenLog(testTopic)
	if err != nil {
		t.Fatal(err)
	}
	// Trimming, the child keeps the last few thousand entries and trims the rest as it goes
	// (from the callbacks, which run in order on the log's writer).
	trim := os.Getenv("LETTERBOX_KILL_CHILD_TRIM") == "true"
	var acks []Position
	inflight := make(chan struct{}, 256)
	stop := time.After(waitFor) // bounded even if nobody kills it
	for i := range uint64(1_000_000) {
		select {
		case inflight <- struct{}{}:
		case <-stop:
			return
		}
		seq := base + i
		l.Append(Meta{SequenceID: seq}, []byte(killData(seq)), nil, func(p Position, err error) {
			<-inflight
			if err != nil {
				return
			}
			fmt.Fprintf(os.Stdout, "ACK %d %d %d\n", p.Ledger, p.Entry, seq)
			if acks = append(acks, p); trim && len(acks) >= 4000 {
				// Announced before it is done: a kill in between must not count it as kept.
				fmt.Fprintf(os.Stdout, "TRIM %d %d\n", acks[2000].Ledger, acks[2000].Entry)
				l.TrimBefore(acks[2000])
				acks = append(acks[:0], acks[2000:]...)
			}
		})
	}
}
