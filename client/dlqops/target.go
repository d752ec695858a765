package dlqops

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// Target is the DLQ an action acts on, and the durable subscription it acts through.
type Target struct {
	Admin  *admin.Client
	Client *client.Client
	Topic  string // the full name
	Sub    string
	Stats  adminapi.TopicStats // as last read (Refresh)
}

// OpenOptions say which subscription an action acts through, and on what kind of topic.
type OpenOptions struct {
	// Subscription is the durable subscription to act through; "": the DLQ's only one.
	Subscription string
	// AnyTopic acts even on a topic the DLQ rule calls neither a dead-letter nor a retry
	// topic (the command line's --not-a-dlq).
	AnyTopic bool
}

// Open finds the DLQ arg names (Resolve), refuses a topic that is no DLQ (RequireLetterTopic)
// unless o.AnyTopic and a partitioned one (dead letters go to one topic, and the replay engine
// reads one), reads its stats and chooses the subscription to act through.
func Open(ctx context.Context, ad *admin.Client, cl *client.Client, arg string, o OpenOptions) (*Target, error) {
	topic, err := Resolve(ctx, ad, arg)
	if err != nil {
		if IsRefusal(err) {
			return nil, err
		}
		return nil, fmt.Errorf("DLQ %w", err)
	}
	t := &Target{Admin: ad, Client: cl, Topic: topic}
	if !o.AnyTopic {
		if err := RequireLetterTopic(ctx, ad, topic); err != nil {
			return nil, err
		}
	}
	if n, err := ad.Partitions(ctx, topic); err == nil && n > 0 {
		return nil, refusef("%s is partitioned (%d partitions): act on one partition, %s-partition-N", topic, n, topic)
	}
	if err := t.Refresh(ctx); err != nil {
		return nil, err
	}
	if t.Sub, err = ChooseSubscription(topic, triage.Subscriptions(t.Stats, true), o.Subscription); err != nil {
		return nil, err
	}
	return t, nil
}

// Refresh reads the DLQ's stats again.
func (t *Target) Refresh(ctx context.Context) error {
	st, err := triage.TopicStats(ctx, t.Admin, t.Topic)
	if err != nil {
		return fmt.Errorf("DLQ %s: %w", t.Topic, err)
	}
	t.Stats = st
	return nil
}

// Backlog is the subscription's backlog as Stats last read it.
func (t *Target) Backlog() triage.Backlog { return triage.BacklogOf(t.Stats, t.Sub) }

// Letters is the subscription's backlog in letters where the broker counts them, else in
// entries (a lower bound), for an ETA.
func (t *Target) Letters() int64 { return lettersOf(t.Backlog()) }

func lettersOf(b triage.Backlog) int64 {
	if b.LettersKnown {
		return b.Letters
	}
	return b.Entries
}

// Deduplicates reports whether the broker deduplicates on the DLQ's namespace, as its stats
// say: a replay from it is then exactly once (the engine's Options.Deduplication).
func Deduplicates(st adminapi.TopicStats) bool {
	return strings.EqualFold(st.DeduplicationStatus, "Enabled")
}

// SubscriptionError is a subscription that cannot be chosen: none given and not exactly one
// durable one to take, or one given that the topic does not have.
type SubscriptionError struct {
	Topic   string
	Given   string   // "" when none was given
	Durable []string // the topic's durable subscriptions, letterbox's own readers' aside
}

func (e *SubscriptionError) Error() string {
	if e.Given == "" {
		return fmt.Sprintf("%s has %d durable subscriptions (%s): choose one", e.Topic, len(e.Durable), strings.Join(e.Durable, ", "))
	}
	return fmt.Sprintf("%s has no durable subscription %q (it has: %s)", e.Topic, e.Given, strings.Join(e.Durable, ", "))
}

// ChooseSubscription is the durable subscription of topic to act through: given, when it is
// one of durable (the topic's, triage.Subscriptions), else the only one. Several, or none, is
// a *Refusal of a *SubscriptionError: the asker's to settle.
func ChooseSubscription(topic string, durable []string, given string) (string, error) {
	switch {
	case given == "" && len(durable) == 1:
		return durable[0], nil
	case given != "" && slices.Contains(durable, given):
		return given, nil
	}
	return "", refuse(&SubscriptionError{Topic: topic, Given: given, Durable: durable})
}

// NotALetterTopicError is a topic the DLQ rule calls neither a dead-letter nor a retry topic:
// purging an application's own subscription by a slip of the name loses its messages.
type NotALetterTopicError struct{ Topic string }

func (e *NotALetterTopicError) Error() string {
	return naming.ShortName(e.Topic, naming.DefaultNamespaceName) + " is not a dead-letter or retry topic by the DLQ rule (no purpose property says so, its name " +
		"derives from no existing topic, its newest message carries no REAL_TOPIC)"
}

// RequireLetterTopic refuses (a *Refusal of a *NotALetterTopicError) a topic that the DLQ rule
// (client/deadletter.Classify, the rule of `dlq ls` and the TUI's badges) calls neither a
// dead-letter nor a retry topic. A partition is judged as its topic.
func RequireLetterTopic(ctx context.Context, ad *admin.Client, topic string) error {
	known, err := topicsBeside(ctx, ad, topic)
	if err != nil {
		return err
	}
	base := naming.BaseName(topic)
	parts, err := ad.Partitions(ctx, base)
	if err != nil && !admin.IsNotFound(err) {
		return fmt.Errorf("%s: %w", base, err)
	}
	v := triage.NewFinder(ad).Verdict(ctx, triage.Topic{Name: base, Partitions: parts, InCounter: -1}, known)
	if v.Kind != deadletter.Standard {
		return nil
	}
	return refuse(&NotALetterTopicError{Topic: topic})
}
