package client

import (
	"errors"
	"fmt"

	"github.com/letterbox-dev/letterbox/client/names"
)

// parseTopic reads a topic name by client/names' rules (upstream's TopicName): "x" (in
// public/default), "tenant/ns/x", or a full "domain://tenant/ns/x" (or a V1 name with a
// cluster). The error wraps ErrInvalidTopic.
func parseTopic(name string) (names.Topic, error) {
	t, err := names.ParseTopic(name)
	if e := (*names.Error)(nil); errors.As(err, &e) {
		return t, fmt.Errorf("%w %q: %s", ErrInvalidTopic, name, e.Why)
	}
	return t, nil
}
