package adminapi

// BrokerInfo is upstream's BrokerInfo: a broker's web service URL and its id (host:port).
type BrokerInfo struct {
	ServiceURL string `json:"serviceUrl"`
	BrokerID   string `json:"brokerId"`
}

// LongRunningProcessStatus is upstream's LongRunningProcessStatus: the state of a compaction
// or offload ("NOT_RUN", "RUNNING", "SUCCESS", "ERROR") and the last run's error.
type LongRunningProcessStatus struct {
	Status    string `json:"status"`
	LastError string `json:"lastError"`
}
