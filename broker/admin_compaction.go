package broker

import "github.com/letterbox-dev/letterbox/client/adminapi"

// Compaction through the admin API, as upstream's …/compaction: PUT starts it, GET reports the
// last run. The compaction itself is compaction.go's.

// TriggerCompaction starts compacting a topic (every partition of a partitioned one) in the
// background, as upstream's PUT …/compaction. A compaction already running answers 409.
func (b *Broker) TriggerCompaction(tname string) error {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return err
	}
	if !name.Persistent {
		return adminErr(ErrNotAllowed, "Compaction is not supported on non-persistent topics")
	}
	ts, err := b.targets(name)
	if err != nil {
		return err
	}
	for _, t := range ts {
		if err := t.startCompaction(); err != nil {
			return err
		}
	}
	return nil
}

// CompactionStatus reports a topic's (or partition's) last compaction, as upstream's GET
// …/compaction.
func (b *Broker) CompactionStatus(tname string) (adminapi.LongRunningProcessStatus, error) {
	name, err := parseAdminTopic(tname)
	if err != nil {
		return adminapi.LongRunningProcessStatus{}, err
	}
	t, err := b.topicFor(name, "Compaction status")
	if err != nil {
		return adminapi.LongRunningProcessStatus{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.compactionOf()
	return adminapi.LongRunningProcessStatus{Status: c.status, LastError: c.lastErr}, nil
}
