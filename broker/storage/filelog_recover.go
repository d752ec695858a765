package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// recover rebuilds the log from its directory when it is opened: it lists the segment and index
// files (queueing leftover trimmed or spare segment files for deletion and removing indexes
// whose segment is gone), opens each sealed segment from its index where that is valid and
// scans it otherwise, cuts a torn tail off the last segment (a sealed segment's damage is kept
// and served up to it), and sets the open segment: an empty, clean last one or a new ledger.
func (l *FileLog) recover() error {
	ledgers, err := l.listFiles()
	if err != nil {
		return err
	}
	lastClean := false // the last segment kept had nothing cut
	var tail *segment  // the last ledger's segment, scanned, if it is kept
	for i, ledger := range ledgers {
		sealed := i < len(ledgers)-1
		s, clean, err := l.recoverSegment(ledger, sealed)
		if err != nil {
			return err
		}
		lastClean = clean
		if s != nil && !sealed {
			tail = s
		}
	}
	for _, s := range l.segs {
		l.entries += s.count()
		for _, e := range s.idx {
			l.size += int64(e.dataLen)
		}
	}
	// An empty, undamaged last segment is reused; otherwise entries go to a new ledger, as a
	// BookKeeper ledger is never reopened for writing: whatever happened to the old tail (a
	// record cut there may have been acknowledged if it was damaged later), its ids stay its.
	if n := len(l.segs); n > 0 && lastClean && l.segs[n-1].count() == 0 {
		l.cur = l.segs[n-1]
		return nil
	}
	s, err := l.createSegment()
	if err != nil {
		return err
	}
	if tail != nil {
		l.writeIndex(tail) // sealed from now on: the next open reads its index
	}
	l.segs = append(l.segs, s)
	l.cur = s
	return nil
}

// listFiles reads the log's directory: it returns the ledgers that have a segment file,
// sorted, queues leftover trimmed or spare segment files for deletion, removes the indexes
// whose segment is gone, and sets l.highest to the highest ledger it saw.
func (l *FileLog) listFiles() (ledgers []int64, err error) {
	var des []os.DirEntry
	err = l.files.transient(func() (err error) {
		des, err = os.ReadDir(l.dir)
		return err
	})
	if err != nil {
		return nil, err
	}
	var indexed []int64
	for _, de := range des {
		if !de.Type().IsRegular() {
			continue
		}
		if ledger, ok := parseSegFileName(de.Name()); ok {
			ledgers = append(ledgers, ledger)
			l.highest = max(l.highest, ledger)
			continue
		}
		if ledger, ok := parseIdxFileName(de.Name()); ok {
			indexed = append(indexed, ledger)
			l.highest = max(l.highest, ledger)
			continue
		}
		name, ok := strings.CutSuffix(de.Name(), deletingSuffix)
		if !ok {
			name, ok = strings.CutSuffix(de.Name(), spareSuffix)
		}
		if ledger, ok2 := parseSegFileName(name); ok && ok2 {
			// A trimmed segment's file, left by a stop while it was being deleted or waited
			// as the spare: delete it.
			path := filepath.Join(l.dir, de.Name())
			l.trash = append(l.trash, &segment{ledger: ledger, path: path, f: l.files.file(path)})
			l.highest = max(l.highest, ledger)
		}
	}
	slices.Sort(ledgers)
	for _, ledger := range indexed {
		if _, ok := slices.BinarySearch(ledgers, ledger); !ok {
			l.removeIndex(ledger) // its segment was trimmed
		}
	}
	return ledgers, nil
}

// recoverSegment opens ledger's segment into l.segs, or leaves it out when nothing of it can
// be served: a sealed one from its index when that is good, else by scanning its records. A
// sealed segment's damage is kept, served up to it; the last segment's torn tail is cut (a
// torn header removes it). It returns the segment kept (nil if none) and whether it is clean:
// nothing cut, no damage.
func (l *FileLog) recoverSegment(ledger int64, sealed bool) (kept *segment, clean bool, err error) {
	path := filepath.Join(l.dir, segFileName(ledger))
	f := l.files.file(path)
	s := &segment{ledger: ledger, path: path, f: f}
	if sealed {
		// A sealed segment opens from its index (segindex.go) when it has a good one.
		err := l.loadIndex(s)
		if err == nil {
			l.segs = append(l.segs, s)
			return s, true, nil
		}
		switch {
		case errors.Is(err, errOldIndex):
			l.log.Info("storage: rebuilding a segment's index of an older format from the records", "segment", path)
		case !errors.Is(err, os.ErrNotExist):
			l.log.Warn("storage: a segment's index does not match it; rebuilding it from the records", "segment", path, "error", err)
		}
	}
	res, err := s.scan()
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("storage: recover %s: %w", path, err)
	}
	if res.badAt < 0 {
		l.segs = append(l.segs, s)
		if sealed {
			l.writeIndex(s)
		}
		return s, true, nil
	}
	cut := res.fileSize - res.badAt
	if sealed || (res.badAt == 0 && res.fileSize > segHeaderSize) {
		// A sealed segment (or a header) was complete and synced before anything after it
		// was written: this is damage, not a crash. Keep the file for inspection and serve
		// what precedes the damage.
		l.log.Error("storage: corrupt record in sealed segment; serving it only up to the damage",
			"segment", path, "offset", res.badAt, "unserved_bytes", cut, "reason", res.reason,
			"entries_served", s.count())
		if res.badAt == 0 {
			f.Close()
			return nil, false, nil
		}
		l.segs = append(l.segs, s)
		return s, false, nil
	}
	if res.badAt == 0 {
		// A torn header: it is synced before any record is written, so no entry was
		// acknowledged here. (A damaged header with records behind it is kept, above.)
		f.Close()
		if err := l.fs.Remove(path); err != nil {
			return nil, false, err
		}
		l.log.Warn("storage: removed a segment with a torn header", "segment", path, "bytes", res.fileSize)
		return nil, false, nil
	}
	if err := f.Truncate(res.badAt); err != nil {
		f.Close()
		return nil, false, fmt.Errorf("storage: cut torn tail of %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, false, fmt.Errorf("storage: cut torn tail of %s: %w", path, err)
	}
	l.log.Warn("storage: cut a torn or corrupt tail", "segment", path, "offset", res.badAt,
		"bytes", cut, "reason", res.reason, "entries_kept", s.count())
	l.segs = append(l.segs, s)
	return s, false, nil
}
