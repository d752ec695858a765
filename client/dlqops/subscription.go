package dlqops

import (
	"context"
	"strings"

	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// ReadSubscription is whose letters a read of topic shows: given, which topic must have (else
// a *Refusal naming those it has), else its main subscription (MainSubscription); "" when it
// has none, and a read shows every letter it retains.
func ReadSubscription(ctx context.Context, ad *admin.Client, topic, given string) (string, error) {
	st, err := triage.TopicStats(ctx, ad, topic)
	if err != nil {
		return "", err
	}
	if given == "" {
		return triage.MainSubscription(st), nil
	}
	if _, ok := st.Subscriptions[given]; !ok {
		return "", refusef("%s has no subscription %q (it has: %s)", topic, given, strings.Join(triage.Subscriptions(st, false), ", "))
	}
	return given, nil
}

// ReplaySubscriptionName is the name of a subscription to add to a DLQ whose letters died on
// origin's subscription (origin "": unknown).
func ReplaySubscriptionName(origin string) string {
	if origin == "" {
		return "dlq-replay"
	}
	return origin + "-replay"
}

// SuggestSubscription names the subscription to add to dt (ReplaySubscriptionName) after the
// one its letters died on: from its name when it derives from one of known, else from the
// DLQ rule's verdict on its newest letter (or the name's last dash).
func SuggestSubscription(ctx context.Context, ad *admin.Client, dt Topic, known []string) string {
	if kind, _, sub, named := naming.FromName(dt.Name, known); named && kind == deadletter.DeadLetter && sub != "" {
		return ReplaySubscriptionName(sub)
	}
	v := triage.NewFinder(ad).Classify(ctx, []triage.Topic{dt})[dt.Name]
	if v.Kind == deadletter.DeadLetter {
		return ReplaySubscriptionName(v.Subscription)
	}
	return ReplaySubscriptionName("")
}
