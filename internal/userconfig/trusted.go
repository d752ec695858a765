package userconfig

import (
	"fmt"
	"strings"

	"github.com/letterbox-dev/letterbox/client/admin"
)

// parseTrustedHosts reads a context's trusted_hosts into ctx, each in a form the admin client
// accepts (admin.CheckTrustedHost), so a mistake is reported with its line before anything
// connects.
func parseTrustedHosts(ctx *Context, fc fileContext) error {
	for _, h := range fc.TrustedHosts {
		h = strings.TrimSpace(h)
		if err := admin.CheckTrustedHost(h); err != nil {
			return fmt.Errorf("%s: context %q: trusted_hosts: %q: want host, host:port or *.domain", ctx.Pos("trusted_hosts"), ctx.Name, h)
		}
		ctx.TrustedHosts = append(ctx.TrustedHosts, h)
	}
	return nil
}
