package replay

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// HistoryEntry is one action on a DLQ as the history keeps it — a replay, a discard, a purge,
// a resend, a subscription created, … — one JSON line of $XDG_STATE_HOME/letterbox/replays.jsonl,
// so the next engineer on call sees what was already done, from the TUI or the command line.
type HistoryEntry struct {
	When time.Time `json:"when"`
	// Action is what was done (the Action* constants); "" in entries written before actions
	// were recorded, which were all replays.
	Action string `json:"action,omitempty"`
	// Cluster keys the history: the context's name or the admin URL (ClusterKey), or a demo's
	// own name; "" in older entries.
	Cluster string `json:"cluster,omitempty"`
	// Context is the config.toml context in use, if any; User is who did it, user@host.
	Context      string `json:"context,omitempty"`
	User         string `json:"user,omitempty"`
	DLQ          string `json:"dlq"`
	Subscription string `json:"subscription"`
	Selection    string `json:"selection"` // in words: "all", "3 marked ids", "reason=…"
	// The counts are letters: each message of a batch one.
	Moved     int64 `json:"moved"`
	Discarded int64 `json:"discarded,omitempty"`
	Skipped   int64 `json:"skipped"`
	Failed    int64 `json:"failed"`
	Guarded   int64 `json:"guarded,omitempty"`
	// Arrived counts dead letters that arrived after the preview and were left; LeftOut the
	// letters up to the preview's last one that the selection (a limit, listed ids) left.
	Arrived int64 `json:"arrived,omitempty"`
	LeftOut int64 `json:"left_out,omitempty"`
	// Result: "complete", "cancelled", "incomplete", or "error: …".
	Result  string        `json:"result"`
	Elapsed time.Duration `json:"elapsed_ns"`
	Run     string        `json:"run,omitempty"` // the run's producer name
	By      string        `json:"by,omitempty"`  // "tui" or "cli"
}

// Actions, as HistoryEntry.Action records them.
const (
	ActionReplay    = "replay"
	ActionDiscard   = "discard"
	ActionPurge     = "purge"
	ActionSkip      = "skip"
	ActionResend    = "resend"
	ActionSubscribe = "subscribe"
	ActionRetention = "retention"
)

// What is the entry's action, "replay" for entries written before actions were recorded.
func (e HistoryEntry) What() string {
	if e.Action == "" {
		return ActionReplay
	}
	return e.Action
}

// Actor is who acts, as the history records it: user@host.
func Actor() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return name + "@" + host
}

// ClusterKey is how the history tells clusters apart: the context's name when one is in use
// (a context names one cluster whatever URL reaches it), else the admin URL. A demo, whose
// broker lives as long as the demo, keys its history with a name of its own instead.
func ClusterKey(context, adminURL string) string {
	if context != "" {
		return "context:" + context
	}
	return strings.TrimRight(adminURL, "/")
}

// Result words a run's outcome for the history.
func Result(s Summary, err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case err != nil:
		return "error: " + err.Error()
	case s.NothingSelected():
		return ResultNothingSelected
	case s.Complete:
		return "complete"
	}
	return "incomplete"
}

// DefaultHistoryPath is $XDG_STATE_HOME/letterbox/replays.jsonl, else
// ~/.local/state/letterbox/replays.jsonl.
func DefaultHistoryPath() (string, error) {
	dir, err := DefaultStateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(dir), "replays.jsonl"), nil
}

var historyMu sync.Mutex

// AppendHistory adds e to the history file at path as one line, written with a single
// append so concurrent writers (a TUI and a CLI run) never interleave within a line.
func AppendHistory(path string, e HistoryEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	historyMu.Lock()
	defer historyMu.Unlock()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("replay history: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("replay history: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("replay history: %w", err)
	}
	return nil
}

// historyTail bounds how much of a long history ReadHistory reads: its last bytes.
const historyTail = 1 << 20

// ReadHistory returns the last limit entries of the history at path (all when limit ≤ 0)
// of cluster (every cluster when "") for dlq (every DLQ when ""), newest first. Entries
// written before the history was keyed by cluster belong to no cluster: they show only when
// cluster is "". A missing file is an empty history; lines it cannot read (a torn last line)
// are skipped.
func ReadHistory(path, cluster, dlq string, limit int) ([]HistoryEntry, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("replay history: %w", err)
	}
	defer f.Close()
	var r io.Reader = f
	if st, err := f.Stat(); err == nil && st.Size() > historyTail {
		if _, err := f.Seek(-historyTail, io.SeekEnd); err == nil {
			br := bufio.NewReader(f)
			br.ReadString('\n') // a partial first line
			r = br
		}
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("replay history: %w", err)
	}
	var out []HistoryEntry
	lines := bytes.Split(data, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if len(bytes.TrimSpace(lines[i])) == 0 {
			continue
		}
		var e HistoryEntry
		if json.Unmarshal(lines[i], &e) != nil {
			continue
		}
		if dlq != "" && qualify(e.DLQ) != qualify(dlq) {
			continue
		}
		if cluster != "" && e.Cluster != cluster {
			continue
		}
		out = append(out, e)
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	return out, nil
}
