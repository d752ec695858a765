package storage

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"
	"time"
)

// The write side of a FileLog: Append queues, the writer goroutine (run) takes the whole queue,
// writes it with one write and one fdatasync (commit: group commit), then publishes the entries
// under mu and runs their callbacks; it rolls to a new segment when the open one is full or the
// rollover policy says so.

// maxWrite bounds one write, so a long queue does not turn into one huge buffer.
const maxWrite = 8 << 20

// createSegment allocates a ledger and gives it the spare file or a new one, durable before it
// is used.
func (l *FileLog) createSegment() (*segment, error) {
	ledger, err := l.alloc(l.highest)
	if err != nil {
		return nil, ioError(fmt.Errorf("storage: allocate ledger: %w", err))
	}
	l.highest = ledger
	path := filepath.Join(l.dir, segFileName(ledger))
	if spare := l.takeSpare(); spare != nil {
		s, err := l.reuse(spare, ledger, path)
		if err == nil {
			return s, nil
		}
		l.log.Warn("storage: could not reuse a segment file; creating one", "segment", spare.path, "error", err)
		l.discard(spare)
	}
	f, err := l.files.create(path, filePerm)
	if err != nil {
		return nil, ioError(err)
	}
	_, err = f.WriteAt(segHeader(ledger), 0)
	if err == nil && !l.noSync {
		if err = f.Sync(); err == nil {
			err = l.files.syncDir(l.dir)
		}
	}
	if err != nil {
		f.Close()
		l.fs.Remove(path)
		return nil, ioError(err)
	}
	return &segment{ledger: ledger, seed: recordSeed(ledger), path: path, f: f, end: segHeaderSize}, nil
}

// ioError marks a full disk (or quota) so that callers can tell it from other failures.
func ioError(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w", ErrNoSpace, err)
	}
	return err
}

// Append queues the entry; done runs on the writer goroutine once it is durable.
func (l *FileLog) Append(meta Meta, data []byte, hold Holder, done func(Position, error)) {
	if n := recordSize(&meta, data) - recPrefix; n > maxRecordBody {
		release(hold)
		done(Position{}, fmt.Errorf("storage: entry of %d bytes is over the %d-byte limit", n, maxRecordBody))
		return
	}
	l.qmu.Lock()
	if l.closing {
		l.qmu.Unlock()
		release(hold)
		done(Position{}, ErrClosed)
		return
	}
	l.queue = append(l.queue, pendingAppend{meta: meta, data: data, hold: hold, done: done})
	l.qmu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// run is the writer goroutine, started by openFileLog and stopped by Close.
func (l *FileLog) run() {
	defer close(l.stopped)
	for {
		l.qmu.Lock()
		for len(l.queue) == 0 && !l.closing && len(l.rolls) == 0 && !l.rollSoon {
			l.qmu.Unlock()
			<-l.wake
			l.qmu.Lock()
		}
		batch := l.queue
		l.queue, l.spare = l.spare[:0], nil
		rolls, soon := l.rolls, l.rollSoon
		l.rolls, l.rollSoon = nil, false
		closing := l.closing
		l.qmu.Unlock()
		if len(batch) > 0 {
			l.commit(batch)
		}
		l.rollRequested(rolls, soon)
		if len(batch) == 0 {
			if closing {
				return // everything queued before Close is written
			}
			continue
		}
		clear(batch) // release payloads and callbacks
		l.qmu.Lock()
		l.spare = batch[:0]
		l.qmu.Unlock()
	}
}

// commit writes batch in as few write+sync rounds as the segment size and maxWrite allow, then
// publishes each round and runs its callbacks. After a failure the rest of the batch fails too,
// so callbacks stay in append order and no later entry lands before an earlier failed one.
func (l *FileLog) commit(batch []pendingAppend) {
	now := time.Now()
	for i := 0; i < len(batch); {
		first := recordSize(&batch[i].meta, batch[i].data)
		if l.broken || (l.cur.count() > 0 && l.cur.end+int64(first) > l.segSize) || l.rollDue(l.cur.count(), now) {
			if err := l.roll(); err != nil {
				l.fail(batch[i:], err)
				return
			}
		}
		cur := l.cur
		base := cur.count()
		buf := l.buf[:0]
		j := i
		for ; j < len(batch); j++ {
			n := recordSize(&batch[j].meta, batch[j].data)
			if j > i && (cur.end+int64(len(buf)+n) > l.segSize || len(buf)+n > maxWrite || l.rollDue(base+int64(j-i), now)) {
				break
			}
			buf = appendRecord(buf, cur.seed, base+int64(j-i), &batch[j].meta, batch[j].data)
		}
		if cap(buf) <= maxWrite {
			l.buf = buf
		}
		if err := l.write(cur, buf); err != nil {
			l.fail(batch[i:], err)
			return
		}
		l.mu.Lock()
		off := cur.end
		for k := i; k < j; k++ {
			n := int64(recordSize(&batch[k].meta, batch[k].data))
			cur.addIndex(indexEntry{off: off, publish: batch[k].meta.PublishTime, dataLen: int32(len(batch[k].data)), num: batch[k].meta.NumMessages})
			off += n
			l.size += int64(len(batch[k].data))
		}
		l.entries += int64(j - i)
		cur.end = off
		for k := i; k < j; k++ {
			l.cacheTail(Entry{Pos: Position{Ledger: cur.ledger, Entry: base + int64(k-i)}, Meta: batch[k].meta, Data: batch[k].data, Hold: batch[k].hold})
			batch[k].hold = nil // the tail's now
		}
		l.mu.Unlock()
		for k := i; k < j; k++ {
			batch[k].done(Position{Ledger: cur.ledger, Entry: base + int64(k-i)}, nil)
		}
		i = j
	}
}

func (l *FileLog) fail(batch []pendingAppend, err error) {
	for _, p := range batch {
		release(p.hold)
		p.done(Position{}, err)
	}
}

// write appends buf at cur.end and syncs it. On failure it cuts the file back to cur.end, so a
// half-written or unsynced record never stays behind to be read after a restart.
func (l *FileLog) write(cur *segment, buf []byte) error {
	// One descriptor for the write, its sync and the cut after a failure: a sync through
	// another could miss an error the write's writeback reported to this one.
	f, err := cur.f.acquire()
	if err != nil {
		return ioError(err)
	}
	defer cur.f.release()
	_, err = f.WriteAt(buf, cur.end)
	if err == nil && !l.noSync {
		err = f.Sync()
	}
	if err == nil {
		return nil
	}
	err = ioError(err)
	terr := f.Truncate(cur.end)
	if terr == nil && !l.noSync {
		terr = f.Sync()
	}
	if terr != nil {
		// The file's tail is unknown; it is never read (reads stop at cur.end) and, as a sealed
		// segment, recovery serves it only up to the first bad record. Write on in a new one.
		l.broken = true
		l.log.Error("storage: could not cut a failed write back; sealing the segment",
			"segment", cur.path, "offset", cur.end, "error", terr)
	}
	l.log.Warn("storage: append failed", "segment", cur.path, "offset", cur.end, "bytes", len(buf), "error", err)
	return err
}

// roll seals the open segment and opens a new one.
func (l *FileLog) roll() error {
	if !l.broken {
		l.seal(l.cur)
		l.writeIndex(l.cur)
	}
	s, err := l.createSegment()
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.segs = append(l.segs, s)
	l.opened = time.Now()
	l.mu.Unlock()
	l.cur = s
	l.broken = false
	return nil
}
