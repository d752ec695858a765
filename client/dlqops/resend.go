package dlqops

import (
	"context"
	"errors"
	"fmt"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/replay"
)

// Resend is the request that sends the one letter id (ledger:entry[:partition:batch]) again,
// as edit says, to dest: the loop guard does not hold back a letter a person resends, and the
// destination, another tenant's or not, is the one the person was shown before being asked.
func Resend(id, dest string, edit *replay.Edit) Request {
	return Request{IDs: []string{id}, Destination: dest, Edit: edit, MaxReplays: -1, AllowCrossTenant: true, Selected: 1}
}

// Destination is where a resend of m from dlq goes: to, when given; else its origin
// (REAL_TOPIC without a partition suffix); else the topic the DLQ's name derives from among
// known (TopicsBeside): where a replay would send it. Neither is a *Refusal: the asker names
// one.
func Destination(m *client.Message, dlq, to string, known []string) (string, error) {
	if to != "" {
		tn, err := admin.ParseTopic(to)
		if err != nil {
			return "", refuse(fmt.Errorf("--to: %w", err))
		}
		return tn.String(), nil
	}
	if rt := m.Properties[client.PropertyRealTopic]; rt != "" {
		if tn, err := admin.ParseTopic(naming.BaseName(rt)); err == nil {
			return tn.String(), nil
		}
	}
	if kind, origin, _, named := naming.FromName(dlq, known); named && kind == deadletter.DeadLetter {
		return origin, nil
	}
	return "", refuse(errors.New("where to? the letter has no REAL_TOPIC and the DLQ's name derives from no existing topic: give one with --to"))
}

// TopicsBeside lists the topics of topic's namespace, in its domain: those its name may derive
// from.
func TopicsBeside(ctx context.Context, ad *admin.Client, topic string) ([]string, error) {
	return topicsBeside(ctx, ad, topic)
}
