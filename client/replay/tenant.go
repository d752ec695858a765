package replay

import (
	"fmt"

	"github.com/letterbox-dev/letterbox/client/naming"
)

// CrossTenantReason starts the reason of a letter left because its destination is in another
// tenant than the DLQ's and the run does not allow that (Options.AllowCrossTenant).
const CrossTenantReason = "another tenant"

// crossTenant is why dest may not receive a letter of this run: "" when it may. A run's
// letters go to a few destinations, and each is judged once (parsing two topic names for every
// letter was an eighth of a replay's CPU).
func (e *engine) crossTenant(dest string) string {
	if dest == "" || e.opts.AllowCrossTenant {
		return ""
	}
	if r, ok := e.tenantVerdicts[dest]; ok {
		return r
	}
	r := e.judgeTenant(dest)
	if len(e.tenantVerdicts) < maxOrigins {
		e.tenantVerdicts[dest] = r
	}
	return r
}

// judgeTenant is crossTenant's verdict on dest, worked out.
func (e *engine) judgeTenant(dest string) string {
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
