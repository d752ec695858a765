package replay

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// DefaultStateDir is where runs are recorded: $XDG_STATE_HOME/letterbox/replays, else
// ~/.local/state/letterbox/replays.
func DefaultStateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "letterbox", "replays"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("replay: no state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "letterbox", "replays"), nil
}

// runState is what a run records so that starting the same replay again resumes it under
// the same producer name, which makes the broker's deduplication drop what it already
// stored. One file per replay (DLQ, subscription, destination, selection).
type runState struct {
	Name         string `json:"name"` // producer name of the run
	DLQ          string `json:"dlq"`
	Subscription string `json:"subscription"`
	To           string `json:"to,omitempty"`
	Selection    string `json:"selection"`
	// Ledgers numbers the DLQ's ledgers in the order the run met them: a message's
	// sequence id is (ledger number, entry, batch index), so it is the same whenever the
	// message is read again and ascends in read order. A ledger is recorded before the
	// first message of it is sent.
	Ledgers        []int64   `json:"ledgers"`
	LastSequenceID int64     `json:"lastSequenceId"`
	Moved          int64     `json:"moved"`
	Skipped        int64     `json:"skipped"`
	Failed         int64     `json:"failed"`
	Guarded        int64     `json:"guarded"`
	Started        time.Time `json:"started"`
	Updated        time.Time `json:"updated"`
	// Retired: a send of this run failed after later ones may have been stored, so the
	// failed message's sequence id is below the broker's mark; the name must not be reused.
	Retired bool `json:"retired,omitempty"`
	// Done: the run ended with every receipted message acknowledged; the next run of the
	// same replay starts afresh.
	Done bool `json:"done,omitempty"`
}

// stateKey names the state file of a replay on cluster ("" for runs of callers that name no
// cluster, and of versions before runs were keyed by one).
func stateKey(cluster, dlq, sub, to, selection string) string {
	key := dlq + "\x00" + sub + "\x00" + to + "\x00" + selection
	if cluster != "" {
		key = "cluster\x00" + cluster + "\x00" + key
	}
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:12])
}

// loadState reads the state at path; ok is false when there is none.
func loadState(path string) (runState, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return runState{}, false, nil
	}
	if err != nil {
		return runState{}, false, fmt.Errorf("replay: read state: %w", err)
	}
	var st runState
	if err := json.Unmarshal(b, &st); err != nil {
		return runState{}, false, fmt.Errorf("replay: state %s: %w", path, err)
	}
	return st, true, nil
}

// save writes st to path durably (temporary file, fsync, rename).
func (st *runState) save(path string) error {
	st.Updated = time.Now().UTC()
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("replay: state directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".run-*")
	if err != nil {
		return fmt.Errorf("replay: write state: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("replay: write state: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("replay: write state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("replay: write state: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replay: write state: %w", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// newRunName is a producer name no earlier run used.
func newRunName() string {
	var b [4]byte
	rand.Read(b[:])
	return "letterbox-replay-" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// Sequence id layout: 11 bits of ledger number, 36 bits of entry, 16 bits of batch index.
const (
	seqBatchBits  = 16
	seqEntryBits  = 36
	seqLedgerBits = 11
)

// ledgerNumber returns the number of ledger in the run, and whether it is new (and must be
// recorded before anything of it is sent).
func (st *runState) ledgerNumber(ledger int64) (int, bool) {
	if i := slices.Index(st.Ledgers, ledger); i >= 0 {
		return i, false
	}
	return len(st.Ledgers), true
}

// sequenceID is the sequence id of the message at (ledger number n, entry, batch index).
func sequenceID(n int, entry int64, batch int32) (int64, error) {
	b := int64(max(batch, 0))
	if n >= 1<<seqLedgerBits || entry < 0 || entry >= 1<<seqEntryBits || b >= 1<<seqBatchBits {
		return 0, fmt.Errorf("replay: message beyond what one run can number (ledger #%d, entry %d, batch index %d); start a new run (--new)", n, entry, b)
	}
	return int64(n)<<(seqEntryBits+seqBatchBits) | entry<<seqBatchBits | b, nil
}

// statePath is the file that records the replay opts describes.
func statePath(opts Options) (string, error) {
	dir := opts.StateDir
	if dir == "" {
		var err error
		if dir, err = DefaultStateDir(); err != nil {
			return "", err
		}
	}
	// Run qualifies To and Destination before it opens the state; Pending sees them as typed.
	to := opts.To
	if to != "" {
		to = qualify(to)
	}
	if opts.Destination != "" {
		to = "\x00all:" + qualify(opts.Destination) // every letter there: another replay than --to's
	}
	key := stateKey(opts.Cluster, qualify(opts.DLQ), opts.Subscription, to, opts.Selection.canonical())
	return filepath.Join(dir, key+".json"), nil
}

// resumable reports whether st is a run the next one resumes.
func resumable(st runState, ok bool, opts Options) bool {
	return ok && !opts.New && opts.Edit == nil && !st.Done && !st.Retired && st.Name != ""
}

// PendingRun is an interrupted run that the same replay resumes.
type PendingRun struct {
	Name    string
	Started time.Time
	// Moved, Skipped, Failed and Guarded are what it did before it was interrupted.
	Moved, Skipped, Failed, Guarded int64
}

// Describe says which run it is, started when (the time of day, with the date when that was
// not the day of now), and what it did: "run letterbox-replay-… of 08:04: 11 already moved,
// 0 skipped, 1 failed".
func (r PendingRun) Describe(now time.Time) string {
	started := r.Started.In(now.Location())
	when := started.Format("15:04")
	if y, m, d := started.Date(); y != now.Year() || m != now.Month() || d != now.Day() {
		when = started.Format("2006-01-02 15:04")
	}
	return fmt.Sprintf("run %s of %s: %d already moved, %d skipped, %d failed", r.Name, when, r.Moved, r.Skipped, r.Failed)
}

// Pending reports the interrupted run that Run(opts) would resume, so that a caller can say
// so before it starts ("resuming run … of 08:04: 11 already moved"); ok is false when Run
// would start a new run (nothing interrupted, opts.New, a dry run or a discard, which keep no
// state).
func Pending(opts Options) (PendingRun, bool, error) {
	if opts.DryRun || opts.Discard {
		return PendingRun{}, false, nil
	}
	path, err := statePath(opts)
	if err != nil {
		return PendingRun{}, false, err
	}
	st, ok, err := loadState(path)
	if err != nil || !resumable(st, ok, opts) {
		return PendingRun{}, false, err
	}
	return PendingRun{Name: st.Name, Started: st.Started, Moved: st.Moved, Skipped: st.Skipped, Failed: st.Failed,
		Guarded: st.Guarded}, true, nil
}

// openState loads the replay's state, resuming an interrupted run, or starts a new one.
func (e *engine) openState() error {
	path, err := statePath(e.opts)
	if err != nil {
		return err
	}
	dlq := qualify(e.opts.DLQ)
	sel := e.opts.Selection.canonical()
	e.statePath = path
	e.sum.StateFile = e.statePath
	st, ok, err := loadState(e.statePath)
	if err != nil && !e.opts.New {
		return err
	}
	if resumable(st, ok, e.opts) {
		e.st = st
		e.sum.Resumed = true
	} else {
		e.st = runState{Name: newRunName(), DLQ: dlq, Subscription: e.opts.Subscription, To: e.opts.To,
			Selection: sel, LastSequenceID: -1, Started: time.Now().UTC()}
	}
	e.sum.Run = e.st.Name
	return e.st.save(e.statePath)
}
