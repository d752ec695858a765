package dlqops

import (
	"time"

	"github.com/letterbox-dev/letterbox/client/replay"
)

// Who says who acts, and on which cluster, as the history records each action.
type Who struct {
	Cluster string // replay.ClusterKey: the context's name or the admin URL
	Context string // the config.toml context in use, if any
	By      string // "cli" or "tui"; "" keeps the entry's own
}

// Record appends e, one action on a DLQ, to the replay history ($XDG_STATE_HOME/letterbox/
// replays.jsonl), which the TUI's dead-letters screen lists: whoever is on call next sees what
// was already done, where and by whom. The command line and the TUI write the same lines.
func Record(e replay.HistoryEntry, who Who) error {
	if e.When.IsZero() {
		e.When = time.Now()
	}
	e.Cluster, e.Context = who.Cluster, who.Context
	if e.User == "" {
		e.User = replay.Actor()
	}
	if who.By != "" {
		e.By = who.By
	}
	path, err := replay.DefaultHistoryPath()
	if err != nil {
		return err
	}
	return replay.AppendHistory(path, e)
}

// History reads the newest actions on dlq (a full name) of cluster, newest first, at most
// limit of them.
func History(cluster, dlq string, limit int) ([]replay.HistoryEntry, error) {
	path, err := replay.DefaultHistoryPath()
	if err != nil {
		return nil, err
	}
	return replay.ReadHistory(path, cluster, dlq, limit)
}

// Entry is the history's line for a run of the engine that did action (replay.ActionReplay,
// replay.ActionDiscard, …) on dlq through sub: selection is what it took, in the caller's
// words; sum what it did (a run that stopped early: its progress so far); result how it ended
// (replay.Result of the summary and the run's error, or the caller's word for it). The caller
// stamps When, and Elapsed where it times the run itself.
func Entry(action, dlq, sub, selection string, sum replay.Summary, result string) replay.HistoryEntry {
	return replay.HistoryEntry{Action: action, DLQ: dlq, Subscription: sub, Selection: selection,
		Moved: sum.Moved, Discarded: sum.Discarded, Skipped: sum.Skipped, Failed: sum.Failed, Guarded: sum.Guarded,
		Arrived: sum.Arrived, LeftOut: sum.LeftOut, Result: result, Elapsed: sum.Elapsed, Run: sum.Run}
}

// ResendEntry is the history's line for a resend of one letter: what moved and what failed,
// not the letters the run read past to find it.
func ResendEntry(dlq, sub, selection string, sum replay.Summary, result string) replay.HistoryEntry {
	return replay.HistoryEntry{Action: replay.ActionResend, DLQ: dlq, Subscription: sub, Selection: selection,
		Moved: sum.Moved, Failed: sum.Failed, Result: result, Elapsed: sum.Elapsed, Run: sum.Run}
}
