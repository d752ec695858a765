package storage

// The tail cache of a FileLog (FileLog.tail): its newest entries as appended, with their holds.

import (
	"slices"
	"sort"
)

// cacheTail adds the newest stored entry, and its hold, to the tail and drops the oldest ones
// over the budget. Called with mu held.
func (l *FileLog) cacheTail(e Entry) {
	if l.tailMax == 0 {
		release(e.Hold)
		return
	}
	l.tail = append(l.tail, e)
	l.tailBytes += len(e.Data)
	for l.tailBytes > l.tailMax && l.tailHead < len(l.tail) {
		l.dropTailHead()
	}
}

func (l *FileLog) dropTailHead() {
	l.tailBytes -= len(l.tail[l.tailHead].Data)
	release(l.tail[l.tailHead].Hold)
	l.tail[l.tailHead] = Entry{} // release the data
	l.tailHead++
	if l.tailHead >= 64 && l.tailHead > len(l.tail)/2 {
		n := copy(l.tail, l.tail[l.tailHead:])
		clear(l.tail[n:])
		l.tail, l.tailHead = l.tail[:n], 0
	}
}

// fromTail returns up to max entries from p on if the tail has p, their holds handed out as
// handOut says. Called with mu held.
func (l *FileLog) fromTail(p Position, max int, held bool) ([]Entry, bool) {
	t := l.tail[l.tailHead:]
	if len(t) == 0 || p.Less(t[0].Pos) {
		return nil, false
	}
	i := sort.Search(len(t), func(k int) bool { return !t[k].Pos.Less(p) })
	if i == len(t) || t[i].Pos != p {
		return nil, false
	}
	out := slices.Clone(t[i:min(len(t), i+max)])
	for k := range out {
		handOut(&out[k], out[k].Hold, held)
	}
	return out, true
}
