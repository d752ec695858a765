package dlqops

import (
	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/replay"
)

// What a person types into an action, read as the replay engine reads it, and the words the
// engine's answers are said in: one reading for the command line and the TUI.

// ParseFilter parses a filter expression as a run selects by it (the grammar of client/expr);
// a syntax error is an *expr.SyntaxError naming the column.
func ParseFilter(s string) (Filter, error) { return replay.ParseFilter(s) }

// ParseIDs parses a comma-separated list of message ids (ledger:entry or
// ledger:entry:partition:batch); a list that names nothing is an error, never "every letter".
func ParseIDs(list string) ([]client.MessageID, error) { return replay.ParseIDs(list) }

// StartEdit is a letter as an edited resend starts from: its payload, key and properties, less
// what the engine sets anew on what it republishes.
func StartEdit(payload []byte, key string, properties map[string]string) Edit {
	return replay.StartEdit(payload, key, properties)
}

// EditedProperties are the properties a resend of m edited as ed says sends, the replay's
// bookkeeping (REPLAYED_FROM, REPLAY_COUNT) included: what to show before it is confirmed.
func EditedProperties(m *client.Message, ed Edit) map[string]string {
	return replay.EditedProperties(m, ed)
}

// TenantOf is the tenant of a topic name (a short one is public's); ok is false for a name
// that is no topic name.
func TenantOf(topic string) (string, bool) { return replay.TenantOf(topic) }

// ClusterKey is how runs and the history tell clusters apart: the context's name when one is
// in use, else the admin URL.
func ClusterKey(context, adminURL string) string { return replay.ClusterKey(context, adminURL) }

// Actor is who acts, as the history records it: user@host.
func Actor() string { return replay.Actor() }

// Result words a run's outcome for the history.
func Result(s Summary, err error) string { return replay.Result(s, err) }

// Pending reports the interrupted run that a run with opts would resume, so that the asker
// can be told before it starts; ok is false when it would start a new one.
func Pending(opts ReplayOptions) (PendingRun, bool, error) { return replay.Pending(opts) }
