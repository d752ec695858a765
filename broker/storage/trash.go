package storage

// Trimmed segments: deleted off the topic's lock, a step at a time, and one file kept as the spare
// that the next rollover writes over. The writer and the deleter goroutine of a FileLog meet here.

import (
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Segment files are recycled: the deleter keeps one trimmed segment's file as a spare, and the
// writer's next rollover writes the new ledger over it instead of creating a file. Writing over
// blocks a file already has makes each fdatasync cheaper (the file's size and block map stay as
// they are, so only data goes to the disk), and no blocks are freed, which on a file system that
// discards freed blocks is what makes deleting slow (below). The old ledger's bytes past the new
// one's end are told apart by the ledger id in every record's checksum (segment.go); a segment
// sealed, or a log closed, cuts them off. A spare that no rollover takes within spareTTL is
// deleted, so a topic that goes quiet gives its disk space back.
const (
	spareSuffix = ".spare"
	spareTTL    = 5 * time.Second
)

// Deleting a segment file frees its blocks, and a file system mounted to discard freed blocks
// does it there and then: unlinking a 64 MiB file keeps the disk busy for tens of milliseconds,
// and every fdatasync waits behind it, which is every receipt of every topic. So the deleter
// first renames the file out of the way (a crash part-way leaves no half-cut segment for
// recovery to take for damage), then shrinks it a step at a time, so that a sync waits for one
// step at most, and only then removes it.
const (
	deletingSuffix = ".deleting"
	deleteStep     = 2 << 20
)

// reuse makes the spare file the segment of ledger at path. The new header is written and synced
// while the file still has its spare name, so that a file named for a ledger always has that
// ledger's header.
func (l *FileLog) reuse(spare *segment, ledger int64, path string) (*segment, error) {
	_, err := spare.f.WriteAt(segHeader(ledger), 0)
	if err == nil && !l.noSync {
		err = spare.f.Sync()
	}
	if err == nil {
		if err = spare.f.rename(path); err == nil {
			// Should the directory sync fail, the caller deletes the file under its new name.
			spare.path, spare.ledger = path, ledger
		}
	}
	if err == nil && !l.noSync {
		err = l.files.syncDir(l.dir)
	}
	if err != nil {
		return nil, ioError(err)
	}
	return &segment{ledger: ledger, seed: recordSeed(ledger), path: path, f: spare.f, end: segHeaderSize, recycled: true}, nil
}

// takeSpare hands the spare file, if there is one, to the writer.
func (l *FileLog) takeSpare() *segment {
	l.dmu.Lock()
	defer l.dmu.Unlock()
	s := l.spareSeg
	l.spareSeg = nil
	return s
}

// discard queues s for deletion.
func (l *FileLog) discard(s *segment) {
	l.dmu.Lock()
	l.trash = append(l.trash, s)
	l.dmu.Unlock()
	l.wakeDeleter()
}

// seal cuts a recycled segment's file to its end, so that no older ledger's bytes stay behind
// it: a sealed segment, or the open one after a clean stop, then ends where its file does.
func (l *FileLog) seal(s *segment) {
	if !s.recycled {
		return
	}
	err := s.f.Truncate(s.end)
	if err == nil && !l.noSync {
		err = s.f.Sync()
	}
	if err != nil {
		// Recovery would take what lies past the end for damage; it still serves every entry.
		l.log.Warn("storage: could not cut a recycled segment to its end", "segment", s.path, "offset", s.end, "error", err)
		return
	}
	s.recycled = false
}

func (l *FileLog) wakeDeleter() {
	select {
	case l.dwake <- struct{}{}:
	default:
	}
}

// deleter deletes trimmed segments, keeping one file as the spare, until the log is closed and
// its trash is empty. A crash before a deletion is durable leaves a trimmed segment behind, which
// the next start serves again until it is trimmed again: entries before a cursor are skipped,
// not redelivered.
func (l *FileLog) deleter() {
	defer close(l.dstopped)
	expiry := time.NewTimer(spareTTL)
	defer expiry.Stop()
	for {
		l.dmu.Lock()
		dead := l.trash
		l.trash = nil
		closing := l.dclosing
		if l.spareSeg != nil && (closing || time.Since(l.spareAt) >= spareTTL) {
			dead = append(dead, l.spareSeg)
			l.spareSeg = nil
		}
		wantSpare := !closing && l.spareSeg == nil
		l.dmu.Unlock()
		if len(dead) == 0 && closing {
			return
		}
		for _, s := range dead {
			l.removeIndex(s.ledger) // before the file goes: an index never outlives its segment for long
		}
		if wantSpare {
			dead = l.keepSpare(dead)
		}
		for _, s := range dead {
			l.delete(s)
		}
		if len(dead) > 0 && !l.noSync {
			if err := l.files.syncDir(l.dir); err != nil {
				l.log.Warn("storage: sync after trimming", "dir", l.dir, "error", err)
			}
		}
		if len(dead) > 0 {
			continue // more may have come meanwhile
		}
		l.dmu.Lock()
		wait := time.Hour
		if l.spareSeg != nil {
			wait = max(spareTTL-time.Since(l.spareAt), time.Millisecond)
		}
		l.dmu.Unlock()
		expiry.Reset(wait)
		select {
		case <-l.dwake:
		case <-expiry.C:
		}
	}
}

// keepSpare makes one of the trimmed segments in dead the spare (renamed, and the rename
// durable before the writer may write over it) and returns the others.
func (l *FileLog) keepSpare(dead []*segment) []*segment {
	for i, s := range dead {
		if s.path != filepath.Join(l.dir, segFileName(s.ledger)) {
			continue // a leftover found at start, or a spare the writer gave back
		}
		path := s.path + spareSuffix
		err := s.f.rename(path)
		if err == nil && !l.noSync {
			err = l.files.syncDir(l.dir)
		}
		if err != nil {
			l.log.Warn("storage: could not keep a trimmed segment's file for reuse", "segment", s.path, "error", err)
			if _, serr := os.Stat(path); serr == nil {
				s.path = path
			}
			return dead
		}
		s.path = path
		l.dmu.Lock()
		l.spareSeg, l.spareAt = s, time.Now()
		l.dmu.Unlock()
		return slices.Delete(dead, i, i+1)
	}
	return dead
}

// delete renames a trimmed segment's file out of the way, shrinks it step by step and removes
// it (see deleteStep).
func (l *FileLog) delete(s *segment) {
	defer s.f.Close()
	path := filepath.Join(l.dir, segFileName(s.ledger)+deletingSuffix)
	if s.path != path {
		if err := s.f.rename(path); err != nil {
			l.log.Error("storage: could not delete a trimmed segment", "segment", s.path, "error", err)
			return
		}
	}
	if size, err := s.f.Size(); err == nil {
		for size > 0 {
			size = max(0, size-deleteStep)
			if err := s.f.Truncate(size); err != nil {
				break // the removal frees the rest at once
			}
		}
	}
	if err := l.fs.Remove(path); err != nil {
		l.log.Error("storage: could not delete a trimmed segment", "segment", path, "error", err)
	}
}
