package broker

import (
	"slices"
	"strconv"

	"github.com/letterbox-dev/letterbox/client/wire"
)

// keySelector maps a message key to a Key_Shared consumer. Keys hash to a slot 0..65535 as
// upstream computes it. Consumers that declared STICKY hash ranges own exactly those slots;
// the others (AUTO_SPLIT, the Go client's default) share the slot space by consistent hashing,
// so a key stays with its consumer until the consumer set changes, and a change moves only the
// keys of the consumer that joined or left.
type keySelector struct {
	ring   []ringPoint // sorted by slot
	sticky []*consumer
}

type ringPoint struct {
	slot uint32
	c    *consumer
}

// pointsPerConsumer spreads each consumer over the ring for an even share.
const pointsPerConsumer = 100

// noKey is the key upstream routes key-less messages by.
const noKey = "NONE_KEY"

func newKeySelector() *keySelector { return &keySelector{} }

func (k *keySelector) add(c *consumer) {
	if len(c.hashRanges) > 0 {
		k.sticky = append(k.sticky, c)
		return
	}
	for i := range pointsPerConsumer {
		slot := wire.KeySharedHash([]byte(c.name + "#" + strconv.FormatUint(c.id, 10) + "#" + strconv.Itoa(i)))
		k.ring = append(k.ring, ringPoint{slot: slot, c: c})
	}
	slices.SortStableFunc(k.ring, func(a, b ringPoint) int { return int(a.slot) - int(b.slot) })
}

func (k *keySelector) remove(c *consumer) {
	k.ring = slices.DeleteFunc(k.ring, func(p ringPoint) bool { return p.c == c })
	k.sticky = slices.DeleteFunc(k.sticky, func(s *consumer) bool { return s == c })
}

// pick returns the consumer for key, or nil when no consumer covers its slot.
func (k *keySelector) pick(key string) *consumer {
	if key == "" {
		key = noKey
	}
	slot := wire.KeySharedHash([]byte(key))
	for _, c := range k.sticky {
		for _, r := range c.hashRanges {
			if int32(slot) >= r[0] && int32(slot) <= r[1] {
				return c
			}
		}
	}
	if len(k.ring) == 0 {
		return nil
	}
	i, _ := slices.BinarySearchFunc(k.ring, slot, func(p ringPoint, s uint32) int { return int(p.slot) - int(s) })
	if i == len(k.ring) {
		i = 0
	}
	return k.ring[i].c
}

// overlaps reports whether ranges collide with a sticky consumer's ranges already in k.
func (k *keySelector) overlaps(ranges [][2]int32) bool {
	for _, c := range k.sticky {
		for _, a := range c.hashRanges {
			for _, b := range ranges {
				if a[0] <= b[1] && b[0] <= a[1] {
					return true
				}
			}
		}
	}
	return false
}
