package storage

// Message counts. An entry holds one message, or a batch of Meta.NumMessages; the broker counts
// what a subscription has not acknowledged in messages (a DLQ's letters), and must do so
// without reading the entries. Each ledger keeps a running total every msgBlock entries, so
// the messages before any entry cost one total and at most msgBlock−1 entries' counts, however
// long the ledger: 8 bytes per 64 entries, beside the per-entry count the index already holds.

// msgBlock is how many entries one running total covers.
const msgBlock = 64

// msgCounts is one ledger's running totals.
type msgCounts struct {
	base  int64   // the block cum[0] is for
	cum   []int64 // cum[k]: the messages in the entries before entry (base+k)·msgBlock
	total int64   // the messages in every entry appended
}

// add counts entry id (the next one of the ledger) with n messages. It reports the bytes it
// newly took, for a meter.
func (c *msgCounts) add(id int64, n int32) (charged int64) {
	if id%msgBlock == 0 {
		c.cum = append(c.cum, c.total)
		charged = 8
	}
	c.total += int64(max(n, 1))
	return charged
}

// before counts the messages in the entries before id; num gives an entry's count, for the
// entries between id's block start and id. id may be the number of entries appended (then it
// is the total).
func (c *msgCounts) before(id int64, num func(int64) int32) int64 {
	k := id/msgBlock - c.base
	if k < 0 {
		k = 0 // dropped: the caller clamps to what is stored
	}
	if k >= int64(len(c.cum)) {
		return c.total
	}
	n := c.cum[k]
	for e := (c.base + k) * msgBlock; e < id; e++ {
		n += int64(max(num(e), 1))
	}
	return n
}

// dropBefore forgets the totals of the blocks wholly before entry id, which nobody will ask
// about again, and reports the bytes it gave back.
func (c *msgCounts) dropBefore(id int64) (freed int64) {
	k := min(id/msgBlock-c.base, int64(len(c.cum)))
	if k <= 0 {
		return 0
	}
	c.cum = c.cum[k:]
	c.base += k
	return 8 * k
}

// cut forgets the entries from n on (a damaged segment is served up to its damage).
func (c *msgCounts) cut(n int64, num func(int64) int32) {
	c.total = c.before(n, num)
	c.cum = c.cum[:min(int64(len(c.cum)), max((n+msgBlock-1)/msgBlock-c.base, 0))]
}

// messagesBetween counts the messages from entry i of ledger a up to entry j of ledger b (not
// included), in a log whose ledgers (a file log's segments, the memory log's ledgers) are held
// in order and indexed from 0: before(x, k) counts ledger x's messages before its entry k, and
// from(x, k) the log's messages from ledger x's entry k on. Both logs answer MessagesBetween so.
func messagesBetween(a int, i int64, b int, j int64, before, from func(x int, k int64) int64) int64 {
	switch {
	case a > b || (a == b && i >= j):
		return 0
	case a == b:
		return before(a, j) - before(a, i)
	}
	return from(a, i) - from(b, j)
}
