package admin

import (
	"encoding/json"
	"net/url"
	"strconv"
)

// The REST paths of admin API v2, with each segment escaped, and query helpers shared by
// every resource.

var v2 = []string{"admin", "v2"}

func path(parts ...string) []string { return append(append([]string{}, v2...), parts...) }

func esc(s string) string { return url.PathEscape(s) }

func forceQ(force bool) url.Values { return url.Values{"force": {strconv.FormatBool(force)}} }

// nullable sends JSON null for a nil map, as upstream's admin clients do.
func nullable(m map[string]string) any {
	if m == nil {
		return json.RawMessage("null")
	}
	return m
}
