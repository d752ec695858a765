package web_test

import (
	"strings"
	"testing"

	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/rest"
)

// Topic-level policies are refused with 405, as upstream refuses them when they are off, and a
// reason that points to the namespace's policy.
func TestPulsarAdminTopicLevelPolicies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tn := *topicName(t, "persistent://public/default/policies")
	must(t, e.adm.Topics().Create(tn, 0))
	refused := func(what string, err error) {
		t.Helper()
		re, ok := err.(rest.Error)
		if !ok || re.Code != 405 || !strings.Contains(re.Reason, "set the policy on the topic's namespace") {
			t.Errorf("%s: %v, want 405 pointing to the namespace policy", what, err)
		}
	}
	refused("set message TTL", e.adm.Topics().SetMessageTTL(tn, 60))
	_, err := e.adm.Topics().GetMessageTTL(tn)
	refused("get message TTL", err)
	_, err = e.adm.Topics().GetRetention(tn, false)
	refused("get retention", err)
	refused("remove max producers", e.adm.Topics().RemoveMaxProducers(tn))
	// Paths that are not policies still answer 404.
	resp, body := do(t, "GET", e.s.URL()+"/admin/v2/persistent/public/default/policies/retentionn")
	if resp.StatusCode != 404 {
		t.Errorf("a misspelt policy: %d %s, want 404", resp.StatusCode, body)
	}
}
