package naming

import (
	"math/rand/v2"
	"strings"
)

// letterbox reads topics through subscriptions and consumers of its own: the non-durable
// subscriptions of its readers (a scan, a browse, a tail) and the consumer a replay attaches to
// a DLQ's subscription. They carry OwnPrefix in their names, so that every letterbox — this
// one, and a colleague's looking at the same cluster — tells them from the applications': they
// are never counted as a topic's subscriptions or consumers, and their backlogs never as the
// topic's growth.
const OwnPrefix = "letterbox-"

// OwnReader is a new name for a letterbox reader's subscription: OwnPrefix, what reads (scan,
// browse, tail), and a random part that keeps two readers apart.
func OwnReader(what string) string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 5)
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	return OwnPrefix + what + "-" + string(b)
}

// IsOwn reports whether a subscription or consumer name is letterbox's own.
func IsOwn(name string) bool { return strings.HasPrefix(name, OwnPrefix) }
