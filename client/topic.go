package client

import (
	"errors"
	"fmt"

	"github.com/letterbox-dev/letterbox/client/naming"
)

// parseTopic reads a topic name by client/naming' rules (upstream's TopicName): "x" (in
// public/default), "tenant/ns/x", or a full "domain://tenant/ns/x" (or a V1 name with a
// cluster). The error wraps ErrInvalidTopic.
func parseTopic(name string) (naming.Topic, error) {
	t, err := naming.ParseTopic(name)
	if e := (*naming.Error)(nil); errors.As(err, &e) {
		return t, fmt.Errorf("%w %q: %s", ErrInvalidTopic, name, e.Why)
	}
	return t, nil
}
