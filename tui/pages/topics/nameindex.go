package topics

import (
	"hash/maphash"

	"github.com/letterbox-dev/letterbox/tui/data"
)

// nameIndex finds a row by its full name: an open-addressing table of row numbers, hashed by
// name, whose names stay in the rows. A map from name to row held a second header of every
// name and cost 5 MB at 100,000 topics, held twice while a large cluster is listed again.
type nameIndex struct {
	seed  maphash.Seed
	slots []int32 // a row's number + 1; 0 is an empty slot
}

// index indexes rows by name (a name listed twice finds its first row).
func (x *nameIndex) index(rows []data.TopicRow) {
	size := 16
	for size < 2*len(rows) {
		size *= 2
	}
	x.seed = maphash.MakeSeed()
	x.slots = make([]int32, size)
	mask := uint64(size - 1)
	for i := range rows {
		j := maphash.String(x.seed, rows[i].Name) & mask
		for x.slots[j] != 0 {
			if rows[x.slots[j]-1].Name == rows[i].Name {
				break
			}
			j = (j + 1) & mask
		}
		if x.slots[j] == 0 {
			x.slots[j] = int32(i + 1)
		}
	}
}

// find is the row named name in rows, the rows index was given.
func (x *nameIndex) find(rows []data.TopicRow, name string) (int, bool) {
	if len(x.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(x.slots) - 1)
	for j := maphash.String(x.seed, name) & mask; x.slots[j] != 0; j = (j + 1) & mask {
		if i := int(x.slots[j] - 1); i < len(rows) && rows[i].Name == name {
			return i, true
		}
	}
	return 0, false
}
