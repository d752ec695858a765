package admin

import "github.com/letterbox-dev/letterbox/client/adminapi"

// Message is a message read without consuming it (peek or by id). ID.BatchIndex is its index
// in its batch, −1 when it is not in one.
type Message struct {
	Topic       string
	ID          adminapi.MessageID
	Payload     []byte
	Properties  map[string]string
	PublishTime string // as the server formats it (ISO-8601)
	// Key is the partition key ("" when none); EventTime the application's time, formatted
	// as PublishTime ("" when unset). For a batch, both are the message's own.
	Key       string
	EventTime string
	// Headers holds the X-Pulsar-* headers of the entry it came from.
	Headers map[string]string
}
