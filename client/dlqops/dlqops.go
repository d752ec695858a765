// Package dlqops is what letterbox does to a dead-letter queue, for the command line and the
// TUI alike: find the topic a name means and the subscription to act through, refuse a topic
// the DLQ rule does not call a DLQ, turn a request (a replay, a discard, a resend) into the
// replay engine's options and run it, purge a backlog, add a subscription, and record each
// action in the replay history. Both callers keep only presentation: flags, prompts and output
// formats on one side, screens on the other.
//
// Entry points: Resolve finds a topic by name; Open makes a Target (a DLQ and its
// subscription), whose Preview says what an action on selected letters takes; Prepare turns a
// Request into the engine's options, which Run runs; Purge, Subscribe and Record do the rest;
// Scan, Browse and Fetch read a whole DLQ without consuming. Errors the asker must settle (a name that is no topic name
// or names several, a subscription to choose) are a *Refusal; a name that matches nothing is
// ErrNotFound.
//
// It is the one door of the command line and the TUI to the engines behind it, client/replay
// and client/triage, which neither imports (values.go names the engines' values for them).
package dlqops

import (
	"errors"
	"fmt"
)

// Refusal is a request that cannot be done as written: a name that is no topic name or names
// several topics, a subscription the DLQ lacks or one of several to choose, a partitioned DLQ,
// a topic the DLQ rule does not call a DLQ. It is the asker's to settle (the command line
// exits 2 on it), never the cluster's failure.
type Refusal struct{ Err error }

func (r *Refusal) Error() string { return r.Err.Error() }
func (r *Refusal) Unwrap() error { return r.Err }

// refuse is a *Refusal of err.
func refuse(err error) error { return &Refusal{Err: err} }

// refusef is a *Refusal worded as fmt.Errorf words it.
func refusef(format string, a ...any) error { return refuse(fmt.Errorf(format, a...)) }

// IsRefusal reports whether err is a refusal (the request's fault, not the cluster's).
func IsRefusal(err error) bool {
	var r *Refusal
	return errors.As(err, &r)
}

// ErrNotFound marks a topic or namespace the cluster does not have.
var ErrNotFound = errors.New("not found")

// notFound is a name that matched no topic: ErrNotFound, worded by client/naming.
type notFound struct{ error }

func (notFound) Is(target error) bool { return target == ErrNotFound }
func (n notFound) Unwrap() error      { return n.error }
