package web_test

import (
	"testing"

	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/rest"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"
)

// wantReason checks an admin failure's status and reason, word for word as upstream's.
func wantReason(t *testing.T, what string, err error, code int, reason string) {
	t.Helper()
	re, ok := err.(rest.Error)
	if !ok || re.Code != code || re.Reason != reason {
		t.Errorf("%s: %v, want HTTP %d %q", what, err, code, reason)
	}
}

// The autoTopicCreation policy is validated as upstream validates it: only an override that
// allows auto-creation, with 412 and upstream's words.
func TestAutoTopicCreationValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.adm.Namespaces()
	nsn := *mustNS(t, "public/default")
	three, minus := 3, -1
	const prefix = "Invalid configuration for autoTopicCreationOverride. the detail is "
	for _, tc := range []struct {
		name   string
		cfg    utils.TopicAutoCreationConfig
		reason string
	}{
		{"partitioned", utils.TopicAutoCreationConfig{Allow: true, Type: utils.Partitioned, Partitions: &three}, ""},
		{"partitioned without partitions", utils.TopicAutoCreationConfig{Allow: true, Type: utils.Partitioned},
			prefix + "[defaultNumPartitions] cannot be null when the type is partitioned."},
		{"partitioned with partitions < 1", utils.TopicAutoCreationConfig{Allow: true, Type: utils.Partitioned, Partitions: &minus},
			prefix + "[defaultNumPartitions] cannot be less than 1 for partition type."},
		{"non-partitioned", utils.TopicAutoCreationConfig{Allow: true, Type: utils.NonPartitioned}, ""},
		{"non-partitioned with partitions", utils.TopicAutoCreationConfig{Allow: true, Type: utils.NonPartitioned, Partitions: &three},
			prefix + "[defaultNumPartitions] is not allowed to be set when the type is non-partition."},
		{"unknown type", utils.TopicAutoCreationConfig{Allow: true, Type: "bogus"}, prefix + "Unknown topic type [bogus]"},
		{"disabled, no type", utils.TopicAutoCreationConfig{Allow: false}, ""},
	} {
		err := ns.SetTopicAutoCreation(nsn, tc.cfg)
		if tc.reason == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			must(t, ns.RemoveTopicAutoCreation(nsn))
			continue
		}
		wantReason(t, tc.name, err, 412, tc.reason)
	}
	nonPart := utils.TopicAutoCreationConfig{Allow: true, Type: utils.NonPartitioned}
	wantReason(t, "missing namespace", ns.SetTopicAutoCreation(*mustNS(t, "public/nonexist"), nonPart), 404, "Namespace does not exist")
	wantReason(t, "missing tenant", ns.SetTopicAutoCreation(*mustNS(t, "non-exist/default"), nonPart), 404, "Tenant does not exist")
}

// A namespace policy of a tenant that does not exist is 404 "Tenant does not exist", the
// schema compatibility strategy included, as upstream checks the tenant first.
func TestSchemaCompatibilityStrategyMissingTenant(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.adm.Namespaces()
	wantReason(t, "set on a missing tenant",
		ns.SetSchemaCompatibilityStrategy(*mustNS(t, "non-exist/default"), utils.SchemaCompatibilityStrategyFull), 404, "Tenant does not exist")
	_, err := ns.GetSchemaCompatibilityStrategy(*mustNS(t, "non-exist/default"))
	wantReason(t, "get on a missing tenant", err, 404, "Tenant does not exist")
	wantReason(t, "set on a missing namespace",
		ns.SetSchemaCompatibilityStrategy(*mustNS(t, "public/nonexist"), utils.SchemaCompatibilityStrategyFull), 404, "Namespace does not exist")
}
