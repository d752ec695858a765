package dlqops

import (
	"context"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// Reads of a DLQ's letters, none of which acknowledges anything or creates a subscription:
// client/triage does them, and the command line and the TUI reach it here.

// Scan reads o.Topic from its first retained message to o.Until with a non-durable reader:
// counts, facets, the positions of the letters o.Filter matches. On cancellation or failure
// it returns what it read so far with the error.
func Scan(ctx context.Context, cl *client.Client, o ScanOptions) (*ScanResult, error) {
	return triage.Scan(ctx, cl, o)
}

// ReadView reads what of topic a read shows: the letters sub has not acknowledged, with
// includeAcked those it acknowledged too, on each partition of a partitioned topic; sub "":
// every retained letter.
func ReadView(ctx context.Context, ad *admin.Client, topic, sub string, includeAcked bool) (*View, error) {
	return triage.ReadView(ctx, ad, topic, sub, includeAcked)
}

// ReadCursor reads sub's cursor on topic (a non-partitioned topic or one partition): which
// letters it acknowledged.
func ReadCursor(ctx context.Context, ad *admin.Client, topic, sub string) (*Cursor, error) {
	return triage.ReadCursor(ctx, ad, topic, sub)
}

// Browse reads a page of up to n messages of topic (a non-partitioned topic or one partition)
// that view shows, from from.
func Browse(ctx context.Context, cl *client.Client, ad *admin.Client, topic string, view *View, from From, n int) (*BrowsePage, error) {
	return triage.Browse(ctx, cl, ad, topic, view, from, n)
}

// Back is where the page of n entries before id starts; ok is false when nothing comes before
// id.
func Back(ctx context.Context, ad *admin.Client, topic string, id client.MessageID, n int) (from From, ok bool, err error) {
	return triage.Back(ctx, ad, topic, id, n)
}

// Fetch reads the messages at ps of topic back through the admin API, in the order of ps:
// those gone, or that view hides, left out.
func Fetch(ctx context.Context, ad *admin.Client, topic string, view *View, ps []Position) ([]admin.Message, error) {
	return triage.Fetch(ctx, ad, topic, view, ps)
}

// ReadBatchAcks asks the broker's configuration whether it keeps acknowledgements of part of
// a batch.
func ReadBatchAcks(ctx context.Context, ad *admin.Client) BatchAcks {
	return triage.ReadBatchAcks(ctx, ad)
}

// PositionOf is the position of a received message, as scans and views name it.
func PositionOf(id client.MessageID) Position { return triage.PositionOf(id) }

// ParseFrom reads where to start reading a topic: "earliest", "latest", a message id or a
// time as expressions take them.
func ParseFrom(s string, now time.Time) (From, error) { return triage.ParseFrom(s, now) }

// ParseFacet checks a facet's name as `dlq stats --by` takes it: one of FacetNames,
// property.NAME or json.NAME.
func ParseFacet(name string) (string, error) { return triage.ParseFacet(name) }

// FacetNames are the facets a scan counts besides properties and JSON fields.
func FacetNames() []string { return append([]string(nil), triage.FacetNames...) }
