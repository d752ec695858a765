package storage

import "time"

// Rollover says when a log closes its open ledger and appends to a new one, as upstream's
// managed ledger does: a ledger is full once it holds MaxEntries entries or MaxBytes of data,
// but is closed only when it is also older than MinAge; a ledger older than MaxAge is closed
// whatever it holds, as long as it holds something. Logs free data a closed ledger at a time
// (TrimBefore), so the open ledger stays readable after everything in it was acknowledged.
//
// The fields carry upstream's broker.conf names: managedLedgerMaxEntriesPerLedger,
// managedLedgerMaxSizePerLedgerMbytes, managedLedgerMinLedgerRolloverTimeMinutes and
// managedLedgerMaxLedgerRolloverTimeMinutes. A zero field takes upstream's default; a negative
// MinAge means no minimum (upstream's 0).
type Rollover struct {
	MaxEntries int64
	MaxBytes   int64
	MinAge     time.Duration
	MaxAge     time.Duration
}

// Upstream's defaults.
const (
	DefaultMaxEntriesPerLedger = 50_000
	DefaultMaxBytesPerLedger   = 2048 << 20
	DefaultMinLedgerAge        = 10 * time.Minute
	DefaultMaxLedgerAge        = 240 * time.Minute
)

// withDefaults fills the zero fields with upstream's defaults.
func (r Rollover) withDefaults() Rollover {
	if r.MaxEntries <= 0 {
		r.MaxEntries = DefaultMaxEntriesPerLedger
	}
	if r.MaxBytes <= 0 {
		r.MaxBytes = DefaultMaxBytesPerLedger
	}
	switch {
	case r.MinAge == 0:
		r.MinAge = DefaultMinLedgerAge
	case r.MinAge < 0:
		r.MinAge = 0 // no minimum: upstream's managedLedgerMinLedgerRolloverTimeMinutes=0
	}
	if r.MaxAge <= 0 {
		r.MaxAge = DefaultMaxLedgerAge
	}
	return r
}

// due reports whether a ledger created at created, holding entries entries of bytes bytes of
// data, is to be closed at now. As upstream's currentLedgerIsFull: full or old enough, and in
// both cases past the minimum age.
func (r Rollover) due(entries, bytes int64, created, now time.Time) bool {
	if entries == 0 {
		return false
	}
	age := now.Sub(created)
	full := entries >= r.MaxEntries || bytes >= r.MaxBytes
	return (full || age >= r.MaxAge) && (r.MinAge <= 0 || age > r.MinAge)
}
