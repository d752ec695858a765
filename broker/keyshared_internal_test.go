package broker

import (
	"fmt"
	"testing"

	"github.com/letterbox-dev/letterbox/client/wire"
)

// Whichever way the range is shared, the ranges reported for the consumers cover every slot
// once and hold the slot of every key picked for them.
func TestKeySelectorRangesMatchPicks(t *testing.T) {
	t.Parallel()
	for _, consistent := range []bool{true, false} {
		cfg := DefaultConfig()
		cfg.SubscriptionKeySharedUseConsistentHashing = consistent
		k := newKeySelector(cfg)
		cs := []*consumer{{id: 1, name: "a"}, {id: 2, name: "b"}, {id: 3, name: "c"}, {id: 4, name: "d"}}
		for _, c := range cs {
			k.add(c)
		}
		k.remove(cs[0]) // auto-split: the top range goes to the consumer below it
		owner := make(map[int32]*consumer)
		for _, c := range cs[1:] {
			for _, r := range k.rangesOf(c) {
				for s := r[0]; s <= r[1]; s++ {
					if prev := owner[s]; prev != nil {
						t.Fatalf("consistent=%v: slot %d reported for %s and %s", consistent, s, prev.name, c.name)
					}
					owner[s] = c
				}
			}
		}
		for s := int32(0); s < wire.KeySharedRangeSize; s++ {
			if owner[s] == nil {
				t.Fatalf("consistent=%v: slot %d reported for no consumer", consistent, s)
			}
		}
		for i := range 2000 {
			key := fmt.Sprintf("key-%d", i)
			slot := int32(wire.KeySharedHash([]byte(key)))
			if got := k.pick(key); got != owner[slot] {
				t.Fatalf("consistent=%v: key %q (slot %d) picked for %s, reported for %s", consistent, key, slot, got.name, owner[slot].name)
			}
		}
	}
}

// Consumers of the same name are told apart on the ring by the lowest index free for the
// name, as upstream's consumer name index tracker does, so each gets its own points.
func TestKeySelectorSameNames(t *testing.T) {
	t.Parallel()
	k := newKeySelector(DefaultConfig())
	a, b, c := &consumer{id: 1, name: "same"}, &consumer{id: 2, name: "same"}, &consumer{id: 3, name: "same"}
	k.add(a)
	k.add(b)
	if k.nameIndex[a] != 0 || k.nameIndex[b] != 1 {
		t.Fatalf("name indexes %d and %d, want 0 and 1", k.nameIndex[a], k.nameIndex[b])
	}
	if len(k.rangesOf(a)) == 0 || len(k.rangesOf(b)) == 0 {
		t.Fatal("a consumer of a shared name owns no range")
	}
	k.remove(a)
	k.add(c)
	if k.nameIndex[c] != 0 {
		t.Fatalf("name index %d after the first one left, want 0 again", k.nameIndex[c])
	}
}
