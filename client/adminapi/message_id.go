package adminapi

// MessageID is a position as the admin API shows and takes it: upstream's JSON
// {"ledgerId","entryId","partitionIndex"}, plus batchIndex for a message inside a batch.
type MessageID struct {
	LedgerID       int64 `json:"ledgerId"`
	EntryID        int64 `json:"entryId"`
	PartitionIndex int   `json:"partitionIndex"`
	BatchIndex     int   `json:"batchIndex,omitempty"`
}

// Earliest and Latest as upstream's admin clients send them.
var (
	Earliest = MessageID{LedgerID: -1, EntryID: -1, PartitionIndex: -1}
	Latest   = MessageID{LedgerID: 1<<63 - 1, EntryID: 1<<63 - 1, PartitionIndex: -1}
)
