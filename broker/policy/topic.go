package policy

import (
	"encoding/json"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// EmptyTopic reports whether tp sets nothing (nil sets nothing): every field is omitted from
// its JSON when unset.
func EmptyTopic(tp *adminapi.TopicPolicies) bool {
	if tp == nil {
		return true
	}
	data, err := json.Marshal(tp)
	return err == nil && string(data) == "{}"
}

// CloneTopic returns a deep copy of tp (of nil: an empty one); see CloneNamespace.
func CloneTopic(tp *adminapi.TopicPolicies) *adminapi.TopicPolicies {
	out := &adminapi.TopicPolicies{}
	if tp == nil {
		return out
	}
	data, _ := json.Marshal(tp)
	json.Unmarshal(data, out)
	return out
}
