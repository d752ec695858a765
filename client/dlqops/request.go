package dlqops

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/replay"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// Request is a replay, a discard or a resend as a person asks for it, in the words of the
// command line's flags and the screens: names and expressions as typed. Prepare (or
// Target.Options) turns it into the engine's options, one way for both.
type Request struct {
	DLQ          string
	Subscription string // "": the DLQ's only durable one (Prepare chooses)
	// IDs select these dead letters (ledger:entry[:partition[:batch]], each item of a list
	// comma-separated); Filters select by the engine's expressions (key=V,
	// property.NAME=V, payload~RE, json.PATH=V, published>=T, published<T), all ANDed.
	// Neither: every dead letter.
	IDs     []string
	Filters []string
	Limit   int64
	Rate    float64 // msg/s, 0 for no limit
	DryRun  bool
	// Total is the subscription's backlog in letters, and Selected the letters the preview
	// selected (0: unknown), for the ETA. Prepare reads Total from the broker.
	Total    int64
	Selected int64
	// Discard acknowledges the selected letters instead of moving them.
	Discard bool
	// To receives the letters whose origin is unknown; Destination, when set, every selected
	// letter instead of its origin.
	To          string
	Destination string
	// AllowCrossTenant lets letters go to another tenant's topics (the engine's option): set
	// once a person confirmed the destinations the preview named.
	AllowCrossTenant bool
	// Edit replaces payload, key and properties of what is sent (a resend).
	Edit *replay.Edit
	// MaxReplays is the loop guard (0: the engine's default; negative: none).
	MaxReplays int
	// New starts a new run rather than resuming an interrupted one of the same replay.
	New bool
	// Until is the last dead letter to take: the preview's (nil: the DLQ's last at the start;
	// Prepare pins a dry run's to the DLQ's last message, which its summary then names).
	Until *client.MessageID
	// Cluster keys the run's state and the history (replay.ClusterKey).
	Cluster string
}

// Describe is the selection in words (the marked ids, the search), for the screens and the
// history; the limit is one of the run's controls, said with them.
func (r Request) Describe() string {
	var parts []string
	switch n := len(r.IDs); {
	case n == 1:
		parts = append(parts, "id "+r.IDs[0])
	case n > 1:
		parts = append(parts, fmt.Sprintf("%d marked ids", n))
	}
	parts = append(parts, r.Filters...)
	if len(parts) == 0 {
		return "all"
	}
	return strings.Join(parts, " · ")
}

// Options turns the request into the engine's options, reading nothing: without the backlog,
// deduplication, the topics beside the DLQ and the admin client that Prepare adds, and
// without Events.
func (r Request) Options() (replay.Options, error) {
	o := replay.Options{DLQ: r.DLQ, Subscription: r.Subscription, To: r.To, Destination: r.Destination, Rate: r.Rate,
		DryRun: r.DryRun, Total: r.Total, Selected: r.Selected, Discard: r.Discard, Edit: r.Edit,
		MaxReplays: r.MaxReplays, New: r.New, Until: r.Until, AllowCrossTenant: r.AllowCrossTenant, Cluster: r.Cluster}
	if r.DLQ == "" || r.Subscription == "" {
		return o, errors.New("replay: a DLQ and its subscription are needed")
	}
	var err error
	if o.DLQ, err = fullName(r.DLQ); err != nil {
		return o, refuse(err)
	}
	for _, dest := range []*string{&o.Destination, &o.To} {
		if *dest == "" {
			continue
		}
		if *dest, err = fullName(*dest); err != nil {
			return o, refuse(err)
		}
	}
	if len(r.IDs) > 0 {
		ids, err := replay.ParseIDs(strings.Join(r.IDs, ","))
		if err != nil {
			return o, refuse(err)
		}
		o.Selection.IDs = ids
	}
	for _, f := range r.Filters {
		pf, err := replay.ParseFilter(f)
		if err != nil {
			return o, refuse(err)
		}
		o.Selection.Filters = append(o.Selection.Filters, pf)
	}
	o.Selection.Limit = r.Limit
	return o, nil
}

// fullName is a topic name by upstream's rules, fully qualified.
func fullName(s string) (string, error) {
	t, err := naming.ParseTopic(s)
	if err != nil {
		return "", err
	}
	return t.String(), nil
}

// Prepare turns req into the engine's options with what the admin API knows: the DLQ's
// stats, for the subscription (its only durable one when req names none) and its backlog in
// letters, for the ETA; whether the broker deduplicates (a replay is then exactly once); the
// topics of the DLQ's namespace, which its name may derive the origin from; and the admin
// client that counts the letters a run leaves. A dry run is pinned to the DLQ's last message
// now, which its summary names, so that the real run can be told to move exactly what it showed.
func Prepare(ctx context.Context, ad *admin.Client, req Request) (replay.Options, error) {
	dlq, err := admin.ParseTopic(req.DLQ)
	if err != nil {
		return replay.Options{}, refuse(err)
	}
	t := &Target{Admin: ad, Topic: dlq.String()}
	if t.Stats, err = ad.Stats(ctx, t.Topic); err != nil {
		return replay.Options{}, fmt.Errorf("DLQ %s: %w", t.Topic, err)
	}
	if t.Sub, err = ChooseSubscription(t.Topic, triage.Subscriptions(t.Stats, true), req.Subscription); err != nil {
		return replay.Options{}, err
	}
	opts, err := t.Options(ctx, req)
	if err != nil {
		return opts, err
	}
	if opts.DryRun && opts.Until == nil {
		if last, err := ad.LastMessageID(ctx, opts.DLQ); err == nil && last.EntryID >= 0 {
			opts.Until = &client.MessageID{Ledger: last.LedgerID, Entry: last.EntryID, Partition: -1, BatchIndex: -1}
		}
	}
	return opts, nil
}

// PrepareNamed is Prepare of a request whose DLQ is a name as a person typed it: the topic it
// means (Resolve), refused when the DLQ rule calls it no dead-letter or retry topic unless
// anyTopic (RequireLetterTopic; the command line's --not-a-dlq), then prepared.
func PrepareNamed(ctx context.Context, ad *admin.Client, req Request, anyTopic bool) (replay.Options, error) {
	var err error
	if req.DLQ, err = Resolve(ctx, ad, req.DLQ); err != nil {
		if !IsRefusal(err) {
			err = fmt.Errorf("DLQ %w", err)
		}
		return replay.Options{}, err
	}
	if !anyTopic {
		if err := RequireLetterTopic(ctx, ad, req.DLQ); err != nil {
			return replay.Options{}, err
		}
	}
	return Prepare(ctx, ad, req)
}

// Options is req acted on t (its DLQ and subscription, whatever req names): the engine's
// options with the subscription's backlog, whether the broker deduplicates, the admin client,
// and for what moves letters the topics the DLQ's name may derive the origin from.
func (t *Target) Options(ctx context.Context, req Request) (replay.Options, error) {
	req.DLQ, req.Subscription = t.Topic, t.Sub
	opts, err := req.Options()
	if err != nil {
		return opts, err
	}
	opts.Admin, opts.Total, opts.Deduplication = t.Admin, t.Letters(), Deduplicates(t.Stats)
	if !req.Discard {
		if opts.KnownTopics, err = topicsBeside(ctx, t.Admin, t.Topic); err != nil {
			return opts, err
		}
	}
	return opts, nil
}
