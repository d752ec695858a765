package client

import (
	"fmt"

	"github.com/letterbox-dev/letterbox/client/names"
)

// parseTopic reads a topic name by client/names' rules (upstream's TopicName): "x" (in
// public/default), "tenant/ns/x", or a full "domain://tenant/ns/x" (or a V1 name with a
// cluster). The error wraps ErrInvalidTopic.
func parseTopic(name string) (names.Topic, error) {
	t, err := names.ParseTopic(name)
	if err != nil {
		return t, fmt.Errorf("%w: %w", ErrInvalidTopic, err)
	}
	return t, nil
}
