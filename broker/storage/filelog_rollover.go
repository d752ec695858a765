package storage

import "time"

// A FileLog's open segment is closed, and the next append goes to a new one, when the next
// record would take it past FileStoreOptions.SegmentSize (a bound on one file), and when the
// Rollover policy says, as upstream closes its ledgers: full (entries or bytes) and past the
// minimum age, or past the maximum age. An idle segment past the maximum age is closed when
// TrimBefore notices it, as upstream's periodic check does; Roll closes it on demand.

// rollDue reports whether the open segment, holding entries entries, is to be closed at now.
// Called on the writer goroutine, the only one to write l.opened (under mu), so it reads it
// without the lock.
func (l *FileLog) rollDue(entries int64, now time.Time) bool {
	return l.policy.due(entries, l.cur.end-segHeaderSize, l.opened, now)
}

// Roll closes the open segment if it holds anything, and returns once it is closed (or the
// log is). It waits for the writer, so it must not be called from a done callback.
func (l *FileLog) Roll() {
	done := make(chan struct{})
	l.qmu.Lock()
	if l.closing {
		l.qmu.Unlock()
		return
	}
	l.rolls = append(l.rolls, done)
	l.qmu.Unlock()
	l.wakeWriter()
	<-done
}

// rollRequested closes the open segment for Roll calls (rolls) and, with soon, when the
// policy says it is due, then lets the Roll calls return. Called on the writer goroutine,
// after it wrote what was queued before them.
func (l *FileLog) rollRequested(rolls []chan struct{}, soon bool) {
	if len(rolls) == 0 && !soon {
		return
	}
	if l.cur.count() > 0 && (len(rolls) > 0 || l.rollDue(l.cur.count(), time.Now())) {
		if err := l.roll(); err != nil {
			// Appends go on in the open segment; the next append retries the rollover.
			l.log.Warn("storage: could not close the open segment", "segment", l.cur.path, "error", err)
		}
	}
	for _, ch := range rolls {
		close(ch)
	}
}

// checkAge asks the writer to close the open segment if it is past its maximum age. It takes
// mu, then qmu, never both at once.
func (l *FileLog) checkAge(now time.Time) {
	l.mu.RLock()
	due := !l.closed && len(l.segs) > 0 && func() bool {
		s := l.segs[len(l.segs)-1]
		return l.policy.due(s.count(), s.end-segHeaderSize, l.opened, now)
	}()
	l.mu.RUnlock()
	if !due {
		return
	}
	l.qmu.Lock()
	l.rollSoon = true
	l.qmu.Unlock()
	l.wakeWriter()
}

func (l *FileLog) wakeWriter() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// DropBefore is TrimBefore: entries in a segment file go with their segment.
func (l *FileLog) DropBefore(p Position) { l.TrimBefore(p) }
