package replay

import (
	"fmt"

	"github.com/letterbox-dev/letterbox/client/naming"
)

// CrossTenantReason starts the reason of a letter left because its destination is in another
// tenant than the DLQ's and the run does not allow that (Options.AllowCrossTenant).
const CrossTenantReason = "another tenant"

// crossTenant is why dest may not receive a letter of this run: "" when it may.
func (e *engine) crossTenant(dest string) string {
	if dest == "" || e.opts.AllowCrossTenant {
		return ""
	}
	to, ok := TenantOf(dest)
	from, _ := TenantOf(e.opts.DLQ)
	if ok && to == from {
		return ""
	}
	return fmt.Sprintf("%s: %s is in tenant %s, the DLQ in %s (not allowed for this run)", CrossTenantReason, dest, to, from)
}

// TenantOf is the tenant of a topic name (a short one is public's); ok is false for a name
// that is no topic name.
func TenantOf(topic string) (string, bool) {
	t, err := naming.ParseTopic(topic)
	if err != nil {
		return "", false
	}
	return t.Tenant, true
}
