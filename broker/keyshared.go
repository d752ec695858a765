package broker

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/letterbox-dev/letterbox/client/wire"
)

// keySelector maps a message key to a Key_Shared consumer. Keys hash to a slot 1..65535 as
// upstream computes it (wire.KeySharedHash). Consumers that declared STICKY hash ranges own
// exactly those slots. The others (AUTO_SPLIT, the official clients' default) share the slot
// space in one of upstream's two ways, as subscriptionKeySharedUseConsistentHashing says:
//
//   - consistent hashing (upstream's default, true): each consumer is placed on a ring at
//     subscriptionKeySharedConsistentHashingReplicaPoints points, upstream's (pointSlot; a
//     point two consumers hash to goes to the later one), and a key goes to the first point at
//     or after its slot, wrapping. A key stays with its consumer until the consumer set
//     changes, and a change moves only the keys of the consumer that joined or left.
//   - auto-split (false), as upstream's HashRangeAutoSplitStickyKeyConsumerSelector: the first
//     consumer owns the whole range, ending at 65536; each consumer that joins takes the lower
//     half of the largest range (the lowest one among equals); a consumer that leaves hands its
//     range to the consumer owning the range above it, or, when it owned the top one, to the
//     consumer below it.
//
// Consumer stats report each consumer's ranges (rangesOf), as upstream's keyHashRanges.
type keySelector struct {
	consistent bool
	points     int               // ring points per consumer (consistent hashing)
	ring       []ringPoint       // sorted by slot, one consumer per slot (consistent hashing)
	nameIndex  map[*consumer]int // consistent hashing: tells consumers of the same name apart
	splits     []splitEnd        // sorted by end (auto-split)
	sticky     []*consumer
}

type ringPoint struct {
	slot uint32
	c    *consumer
}

// splitEnd is an auto-split range: c owns the slots above the previous end up to end.
type splitEnd struct {
	end int32
	c   *consumer
}

// splitRangeSize is upstream's auto-split range size: the top range ends at it.
const splitRangeSize = 1 << 16

// noKey is the key upstream routes key-less messages by.
const noKey = "NONE_KEY"

func newKeySelector(cfg Config) *keySelector {
	return &keySelector{
		consistent: cfg.SubscriptionKeySharedUseConsistentHashing,
		points:     cfg.SubscriptionKeySharedConsistentHashingReplicaPoints,
		nameIndex:  make(map[*consumer]int),
	}
}

// full reports why no AUTO_SPLIT consumer can join any more ("" if one can): every range is a
// single slot, as upstream refuses such a consumer with ConsumerAssignError.
func (k *keySelector) full() string {
	if k.consistent || len(k.splits) == 0 {
		return ""
	}
	if _, size := k.biggest(); size <= 1 {
		return fmt.Sprintf("No more range can assigned to new consumer, assigned consumers %d", len(k.splits))
	}
	return ""
}

func (k *keySelector) add(c *consumer) {
	switch {
	case len(c.hashRanges) > 0:
		k.sticky = append(k.sticky, c)
	case k.consistent:
		k.nameIndex[c] = k.freeNameIndex(c.name)
		for i := range k.points {
			slot := k.pointSlot(c, i)
			j, found := slices.BinarySearchFunc(k.ring, slot, func(p ringPoint, s uint32) int { return int(p.slot) - int(s) })
			if found {
				k.ring[j].c = c // a collision: the newcomer takes the point, as upstream
				continue
			}
			k.ring = slices.Insert(k.ring, j, ringPoint{slot: slot, c: c})
		}
	case len(k.splits) == 0:
		k.splits = []splitEnd{{end: splitRangeSize, c: c}}
	default:
		i, _ := k.biggest()
		lower := int32(0)
		if i > 0 {
			lower = k.splits[i-1].end
		}
		end := k.splits[i].end
		k.splits = slices.Insert(k.splits, i, splitEnd{end: end - (end-lower)>>1, c: c})
	}
}

// biggest is the index and size of the largest auto-split range, the lowest among equals.
func (k *keySelector) biggest() (int, int32) {
	best, size, lower := 0, int32(0), int32(0)
	for i, s := range k.splits {
		if s.end-lower > size {
			best, size = i, s.end-lower
		}
		lower = s.end
	}
	return best, size
}

// pointSlot is where upstream places point i of c on the ring: the sticky-key hash of the
// consumer's name, the index that tells consumers of the same name apart and i, separated by
// NUL characters.
func (k *keySelector) pointSlot(c *consumer, i int) uint32 {
	return wire.KeySharedHash([]byte(c.name + "\x00" + strconv.Itoa(k.nameIndex[c]) + "\x00" + strconv.Itoa(i)))
}

// freeNameIndex is the lowest index no consumer named name on the ring holds, as upstream's
// consumer name index tracker hands them out.
func (k *keySelector) freeNameIndex(name string) int {
	used := make(map[int]bool)
	for o, i := range k.nameIndex {
		if o.name == name {
			used[i] = true
		}
	}
	i := 0
	for used[i] {
		i++
	}
	return i
}

func (k *keySelector) remove(c *consumer) {
	k.ring = slices.DeleteFunc(k.ring, func(p ringPoint) bool { return p.c == c })
	delete(k.nameIndex, c)
	k.sticky = slices.DeleteFunc(k.sticky, func(s *consumer) bool { return s == c })
	i := slices.IndexFunc(k.splits, func(s splitEnd) bool { return s.c == c })
	switch {
	case i < 0:
	case i == len(k.splits)-1 && i > 0:
		// The top range goes to the consumer below, whose own range joins the one above it.
		k.splits[i].c = k.splits[i-1].c
		k.splits = slices.Delete(k.splits, i-1, i)
	default:
		k.splits = slices.Delete(k.splits, i, i+1)
	}
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
	if len(k.splits) > 0 {
		i, _ := slices.BinarySearchFunc(k.splits, int32(slot), func(s splitEnd, slot int32) int { return int(s.end - slot) })
		return k.splits[i].c // the top range ends at 65536, above every slot
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

// rangesOf returns the hash ranges c owns, inclusive, in order, as upstream reports them: a
// sticky consumer's declared ones; an auto-split consumer's, the top one ending at 65536; a
// consistent-hashing consumer's arcs of the ring over 0..65535.
func (k *keySelector) rangesOf(c *consumer) [][2]int32 {
	if len(c.hashRanges) > 0 {
		return c.hashRanges
	}
	var out [][2]int32
	own := func(start, end int32, owner *consumer) {
		if owner != c || start > end {
			return
		}
		if n := len(out); n > 0 && out[n-1][1]+1 == start {
			out[n-1][1] = end
			return
		}
		out = append(out, [2]int32{start, end})
	}
	start := int32(0)
	for _, s := range k.splits {
		own(start, s.end, s.c)
		start = s.end + 1
	}
	if len(k.ring) > 0 {
		start = 0
		for _, p := range k.ring {
			own(start, int32(p.slot), p.c)
			start = max(start, int32(p.slot)+1)
		}
		own(start, wire.KeySharedRangeSize-1, k.ring[0].c)
	}
	return out
}

// keyHashRanges renders ranges as consumer stats report them: as pairs (upstream 4's
// keyHashRangeArrays) and as strings (keyHashRanges, upstream's classic form).
func keyHashRanges(ranges [][2]int32) ([][2]int32, []string) {
	if len(ranges) == 0 {
		return nil, nil
	}
	strs := make([]string, len(ranges))
	for i, r := range ranges {
		strs[i] = fmt.Sprintf("[%d, %d]", r[0], r[1])
	}
	return slices.Clone(ranges), strs
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
