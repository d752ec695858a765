package broker

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/letterbox-dev/letterbox/broker/policy"
	"github.com/letterbox-dev/letterbox/client/naming"
)

// The admin API: what broker/web serves as upstream's REST v2, as methods on *Broker. One file
// per resource (admin_tenants.go, admin_namespaces.go, admin_policies.go, admin_topics.go,
// admin_topic_properties.go, admin_topic_messages.go, admin_topic_policies.go,
// admin_subscriptions.go, admin_schemas.go, admin_peek.go, admin_stats.go,
// admin_internal_stats.go, admin_compaction.go, unload.go; dynamic_config.go for the brokers' dynamic
// configuration). Names are fully qualified topic names ("persistent://tenant/ns/topic") or
// "tenant/ns" namespaces.
//
// Locking: the admin methods take locks in the order broker.go's package comment gives; the
// admin state's own mutex (adminState.mu) is a leaf there, held only around the store's
// metadata writes besides the state itself.

// Errors the admin API returns, wrapped in *AdminError with upstream's reason text. The web
// layer maps each to its HTTP status (in brackets).
var (
	ErrNotFound           = errors.New("not found")           // 404
	ErrAlreadyExists      = errors.New("already exists")      // 409
	ErrConflict           = errors.New("conflict")            // 409: e.g. a namespace that is not empty
	ErrPreconditionFailed = errors.New("precondition failed") // 412: busy topic, bad partitioned name…
	ErrInvalidName        = errors.New("invalid name")        // 412, as upstream answers bad names
	ErrNotAllowed         = errors.New("not allowed")         // 405: e.g. peek on a partitioned topic
	ErrInvalidArgument    = errors.New("invalid argument")    // 400
	ErrNotAcceptable      = errors.New("not acceptable")      // 406: e.g. a partition count ≤ 0
	ErrUnprocessable      = errors.New("unprocessable")       // 422: e.g. fewer partitions than before
	ErrForbidden          = errors.New("forbidden")           // 403: e.g. a cluster that does not exist
)

// AdminError is an admin API failure: Kind is one of the Err* sentinels (errors.Is works), and
// Error() is the reason upstream would give.
type AdminError struct {
	Kind   error
	Reason string
}

func (e *AdminError) Error() string { return e.Reason }
func (e *AdminError) Unwrap() error { return e.Kind }

func adminErr(kind error, format string, args ...any) error {
	return &AdminError{Kind: kind, Reason: fmt.Sprintf(format, args...)}
}

// isKind reports whether err is one of the admin errors of kind.
func isKind(err, kind error) bool { return err != nil && errors.Is(err, kind) }

// adminState is what the admin API adds to the broker: tenants, namespace policies, topic
// policies, resource groups and terminated topics (persisted in the store's tenants,
// namespaces, topicPolicies, resourceGroups and topics buckets: admin_store.go), plus the rate samples behind the stats. Guarded by mu, a
// leaf lock.
type adminState struct {
	mu         sync.Mutex
	loaded     bool
	tenants    map[string]*TenantInfo
	policies   map[string]*policy.Policies // "tenant/ns" → policies
	terminated map[string]bool             // topic full name → terminated
	// topicPolicies are the topic-level policies by topic (a partitioned topic's base name),
	// admin_topic_policies.go.
	topicPolicies map[string]*policy.TopicPolicies
	// resourceGroups are the resource groups by name (resourcegroups.go).
	resourceGroups map[string]policy.ResourceGroup
	// version counts the changes to policies, so that topics know when to resolve theirs again
	// (topic_limits.go); read without the lock.
	version atomic.Uint64

	samplerOnce sync.Once
	rates       rateSamples
}

// state returns the broker's admin state with its maps made, locked; call the returned unlock.
func (b *Broker) adminLocked() (*adminState, func()) {
	a := &b.admin
	a.mu.Lock()
	if !a.loaded {
		a.loaded = true
		a.tenants = map[string]*TenantInfo{"public": {AdminRoles: []string{}, AllowedClusters: []string{b.cfg.ClusterName}}}
		a.policies = map[string]*policy.Policies{}
		a.terminated = map[string]bool{}
		a.topicPolicies = map[string]*policy.TopicPolicies{}
		a.resourceGroups = map[string]policy.ResourceGroup{}
	}
	return a, a.mu.Unlock
}

// parseAdminTopic parses a fully qualified (or short) topic name, as the admin API takes it.
func parseAdminTopic(name string) (topicName, error) {
	t, err := parseTopicName(name)
	if err != nil {
		return t, adminErr(ErrInvalidName, "Invalid topic name %s: %v", name, err)
	}
	return t, nil
}

// validNamePart reports whether s is a valid tenant or namespace name.
func validNamePart(s string) bool { return naming.ValidNamePart(s) }

// splitNamespace checks "tenant/ns".
func splitNamespace(ns string) (tenant, local string, err error) {
	tenant, local, ok := strings.Cut(ns, "/")
	if !ok || !validNamePart(tenant) || !validNamePart(local) {
		return "", "", adminErr(ErrInvalidName, "Invalid namespace name %s", ns)
	}
	return tenant, local, nil
}

// MessageID is a position as the admin API shows it: upstream's JSON
// {"ledgerId","entryId","partitionIndex"} plus batchIndex when inside a batch.
type MessageID struct {
	LedgerID       int64 `json:"ledgerId"`
	EntryID        int64 `json:"entryId"`
	PartitionIndex int   `json:"partitionIndex"`
	BatchIndex     int   `json:"batchIndex,omitempty"`
}

// Earliest and latest as upstream's admin clients send them.
func (m MessageID) isEarliest() bool { return m.LedgerID == -1 && m.EntryID == -1 }
func (m MessageID) isLatest() bool {
	return m.LedgerID == 1<<63-1 && m.EntryID == 1<<63-1
}

func millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
