package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/letterbox-dev/letterbox/client/dlqops"
)

// Which topic a command's DLQ argument means, and whether an action may act on it, is
// client/dlqops's, the TUI's too: a short name is the one topic of that name in any namespace
// (dlqops.Resolve), and the dead-letter actions (discard, purge, resend, subscribe, replay) act
// only on a topic the DLQ rule calls a dead-letter or retry topic (dlqops.RequireLetterTopic),
// unless --not-a-dlq says that the topic is meant. Here: how the command line words them.

// notADLQHelp is the help of --not-a-dlq.
const notADLQHelp = "act even on a topic the DLQ rule does not call a dead-letter or retry topic"

// isUsage reports whether err is the command line's mistake (exit 2): a usageErr of its own,
// or a request client/dlqops refused.
func isUsage(err error) bool {
	var ue usageErr
	return errors.As(err, &ue) || dlqops.IsRefusal(err)
}

// usageErr marks an error that is the command line's fault.
type usageErr struct{ error }

// flagWords words a refusal of client/dlqops for the command line cmd: the flag that settles
// it named. Other errors are returned as they are.
func flagWords(cmd string, err error) error {
	var se *dlqops.SubscriptionError
	var nl *dlqops.NotALetterTopicError
	switch {
	case errors.As(err, &se) && se.Given == "":
		return usageErr{fmt.Errorf("%w with --subscription", err)}
	case errors.As(err, &nl):
		action := strings.TrimPrefix(strings.TrimPrefix(cmd, "letterbox "), "dlq ")
		return usageErr{fmt.Errorf("%w: %s acts on dead letters; add --not-a-dlq to %s it anyway", err, action, action)}
	}
	return err
}
