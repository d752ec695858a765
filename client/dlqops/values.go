package dlqops

import (
	"github.com/letterbox-dev/letterbox/client/replay"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// The values the command line and the TUI show, as the engines define them. They are aliases,
// not copies: each is defined once, in the engine that produces it (client/replay for runs and
// the history, client/triage for reads of a whole DLQ), and the presentation names them here so
// that it imports this package alone.

// A replay run, and the history of actions.
type (
	ReplayOptions  = replay.Options
	Event          = replay.Event
	Summary        = replay.Summary
	ReplayProgress = replay.Progress
	Action         = replay.Action
	Edit           = replay.Edit
	Filter         = replay.Filter
	Selection      = replay.Selection
	PendingRun     = replay.PendingRun
	HistoryEntry   = replay.HistoryEntry
	// PartOfBatchError is CheckBatches' refusal.
	PartOfBatchError = replay.PartOfBatchError
)

// What a run did with one letter (Event.Action).
const (
	Moved        = replay.Moved
	Discarded    = replay.Discarded
	Skipped      = replay.Skipped
	Failed       = replay.Failed
	WouldMove    = replay.WouldMove
	WouldDiscard = replay.WouldDiscard
)

// The actions the history records (HistoryEntry.Action).
const (
	ActionReplay    = replay.ActionReplay
	ActionDiscard   = replay.ActionDiscard
	ActionPurge     = replay.ActionPurge
	ActionSkip      = replay.ActionSkip
	ActionResend    = replay.ActionResend
	ActionSubscribe = replay.ActionSubscribe
	ActionRetention = replay.ActionRetention
)

const (
	// ResultNothingSelected is the result of a run whose selection took no letter.
	ResultNothingSelected = replay.ResultNothingSelected
	// CrossTenantReason is the Event.Reason of a letter held back from another tenant's topic.
	CrossTenantReason = replay.CrossTenantReason
	// DefaultMaxReplays is the loop guard's default.
	DefaultMaxReplays = replay.DefaultMaxReplays
	// The properties a replay adds to what it sends.
	PropertyReplayedFrom = replay.PropertyReplayedFrom
	PropertyReplayCount  = replay.PropertyReplayCount
)

// ErrBusy: another consumer holds the DLQ's subscription, so a run cannot take it.
var ErrBusy = replay.ErrBusy

// Reads of a whole DLQ: a scan, its facets and causes, a page, positions, a cursor, a topic's
// classification and backlog.
type (
	ScanOptions  = triage.ScanOptions
	ScanResult   = triage.Result
	ScanStats    = triage.Stats
	ScanProgress = triage.Progress
	Count        = triage.Count
	HourCount    = triage.HourCount
	Cause        = triage.Cause
	CauseSplit   = triage.CauseSplit
	Facets       = triage.Facets
	FacetSummary = triage.FacetSummary
	FacetValue   = triage.FacetValue
	Position     = triage.Position
	// LedgerEntry is one entry of the log (a batch being one): ledger and entry ids.
	LedgerEntry = triage.Entry
	From        = triage.From
	View        = triage.View
	BrowsePage  = triage.BrowsePage
	Cursor      = triage.Cursor
	Backlog     = triage.Backlog
	BatchAcks   = triage.BatchAcks
	Topic       = triage.Topic
	Finder      = triage.Finder
)

// How a broker acknowledges the letters of a batch (ReadBatchAcks).
const (
	BatchAcksUnknown = triage.BatchAcksUnknown
	BatchAcksLost    = triage.BatchAcksLost
)

// The facets a scan counts, and the words it counts a missing value under.
const (
	FacetKey       = triage.FacetKey
	FacetReason    = triage.FacetReason
	FacetPublished = triage.FacetPublished
	NoKey          = triage.NoKey
	NoOrigin       = triage.NoOrigin
	NoReason       = triage.NoReason
)

// ErrTopicGone: the topic was deleted while it was read.
var ErrTopicGone = triage.ErrTopicGone
