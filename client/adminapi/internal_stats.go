package adminapi

// Upstream's …/internalStats: a persistent topic's ledgers and cursors.

// InternalStats is upstream's PersistentTopicInternalStats JSON.
type InternalStats struct {
	EntriesAddedCounter                int64                  `json:"entriesAddedCounter"`
	NumberOfEntries                    int64                  `json:"numberOfEntries"`
	TotalSize                          int64                  `json:"totalSize"`
	CurrentLedgerEntries               int64                  `json:"currentLedgerEntries"`
	CurrentLedgerSize                  int64                  `json:"currentLedgerSize"`
	LastLedgerCreatedTimestamp         string                 `json:"lastLedgerCreatedTimestamp"`
	LastLedgerCreationFailureTimestamp string                 `json:"lastLedgerCreationFailureTimestamp,omitempty"`
	WaitingCursorsCount                int                    `json:"waitingCursorsCount"`
	PendingAddEntriesCount             int                    `json:"pendingAddEntriesCount"`
	LastConfirmedEntry                 string                 `json:"lastConfirmedEntry"`
	State                              string                 `json:"state"`
	Ledgers                            []LedgerInfo           `json:"ledgers"`
	Cursors                            map[string]CursorStats `json:"cursors"`
	SchemaLedgers                      []LedgerInfo           `json:"schemaLedgers"`
	CompactedLedger                    LedgerInfo             `json:"compactedLedger"`
}

// LedgerInfo is upstream's LedgerInfo JSON.
type LedgerInfo struct {
	LedgerID        int64  `json:"ledgerId"`
	Entries         int64  `json:"entries"`
	Size            int64  `json:"size"`
	Timestamp       int64  `json:"timestamp,omitempty"`
	Offloaded       bool   `json:"offloaded"`
	Metadata        string `json:"metadata,omitempty"`
	UnderReplicated bool   `json:"underReplicated"`
}

// CursorStats is upstream's CursorStats JSON plus letterbox's extension batchDeletedIndexes
// (left out in upstream-compat mode).
type CursorStats struct {
	MarkDeletePosition                       string           `json:"markDeletePosition"`
	ReadPosition                             string           `json:"readPosition"`
	WaitingReadOp                            bool             `json:"waitingReadOp"`
	PendingReadOps                           int              `json:"pendingReadOps"`
	MessagesConsumedCounter                  int64            `json:"messagesConsumedCounter"`
	CursorLedger                             int64            `json:"cursorLedger"`
	CursorLedgerLastEntry                    int64            `json:"cursorLedgerLastEntry"`
	IndividuallyDeletedMessages              string           `json:"individuallyDeletedMessages"`
	LastLedgerSwitchTimestamp                string           `json:"lastLedgerSwitchTimestamp"`
	State                                    string           `json:"state"`
	Active                                   bool             `json:"active"`
	NumberOfEntriesSinceFirstNotAckedMessage int64            `json:"numberOfEntriesSinceFirstNotAckedMessage"`
	TotalNonContiguousDeletedMessagesRange   int              `json:"totalNonContiguousDeletedMessagesRange"`
	SubscriptionHavePendingRead              bool             `json:"subscriptionHavePendingRead"`
	Properties                               map[string]int64 `json:"properties"`
	// BatchDeletedIndexes names each batch after the mark-delete position that is
	// acknowledged in part ("ledger:entry") with its acknowledged indexes, ascending: what
	// upstream's cursor keeps as batchDeletedIndexes and its stats do not show. With it, a
	// reader skips exactly the messages the subscription acknowledged. Absent in
	// upstream-compat mode and from a real cluster (nil, which is not "none"); {} when no batch
	// is acknowledged in part.
	BatchDeletedIndexes *map[string][]int32 `json:"batchDeletedIndexes,omitempty"`
}
