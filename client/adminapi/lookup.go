package adminapi

// LookupData is upstream's LookupData: where a topic is served.
type LookupData struct {
	BrokerURL    string `json:"brokerUrl"`
	BrokerURLTLS string `json:"brokerUrlTls"`
	HTTPURL      string `json:"httpUrl"`
	HTTPURLTLS   string `json:"httpUrlTls"`
	NativeURL    string `json:"nativeUrl"`
}
