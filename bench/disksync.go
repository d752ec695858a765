package main

// What a sync costs on the disk under the durable broker's data directory: the figure the
// durable throughput stands on, since a receipt waits for the fdatasync that covers its entry and
// the client keeps a bounded number of messages in flight.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// diskSync is the median time of a write followed by fdatasync, for two sizes, appending to a
// new file and writing over blocks the file already has.
type diskSync struct {
	small, batch           int // bytes per write
	appendSmall, overSmall time.Duration
	appendBatch, overBatch time.Duration
}

const diskSyncRounds = 200

// measureDiskSync measures in dir, before any broker writes there.
func measureDiskSync(dir string) (*diskSync, error) {
	d := &diskSync{small: 4 << 10, batch: 128 << 10}
	var err error
	if d.appendSmall, d.overSmall, err = syncCost(dir, d.small); err != nil {
		return nil, err
	}
	if d.appendBatch, d.overBatch, err = syncCost(dir, d.batch); err != nil {
		return nil, err
	}
	return d, nil
}

// syncCost returns the median time of diskSyncRounds writes of size bytes, each followed by
// fdatasync, first appending to a new file, then writing over it from its start.
func syncCost(dir string, size int) (appending, over time.Duration, err error) {
	path := filepath.Join(dir, fmt.Sprintf("disk-sync-%d", size))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(path)
	defer f.Close()
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i)
	}
	round := func(off int64) (time.Duration, error) {
		start := time.Now()
		if _, err := f.WriteAt(buf, off); err != nil {
			return 0, err
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			return 0, fmt.Errorf("fdatasync %s: %w", path, err)
		}
		return time.Since(start), nil
	}
	median := func() (time.Duration, error) {
		ds := make([]time.Duration, diskSyncRounds)
		for i := range ds {
			var err error
			if ds[i], err = round(int64(i * size)); err != nil {
				return 0, err
			}
		}
		slices.Sort(ds)
		return ds[len(ds)/2], nil
	}
	// The first pass appends (the file grows with each write); the second writes the same
	// offsets again.
	if appending, err = median(); err != nil {
		return 0, 0, err
	}
	if over, err = median(); err != nil {
		return 0, 0, err
	}
	return appending, over, nil
}

func (d *diskSync) markdown() string {
	return fmt.Sprintf("Disk: a write followed by fdatasync, in the data directory's file system, median of %d: %d KiB %.2f ms appending to a file, %.2f ms writing over blocks it has; %d KiB %.2f / %.2f ms (one batch of the official client's default size). "+
		"Writing over is what a recycled segment gets; a new topic's first segments append. The durable targets were set on a disk where such a sync costs about 0.35 ms.\n",
		diskSyncRounds, d.small>>10, millis(d.appendSmall), millis(d.overSmall), d.batch>>10, millis(d.appendBatch), millis(d.overBatch))
}
