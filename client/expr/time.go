package expr

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/naming"
)

// timeLayouts are the absolute times published accepts; those without a zone are local.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05",
	"2006-01-02 15:04", "2006-01-02"}

// ParseTime reads a time as published>= takes it: RFC 3339, 2026-11-30 08:00[:05],
// 2026-11-30 (local time, now's location), -2h / -30m / -1d (that long before now), or now.
func ParseTime(v string, now time.Time) (time.Time, error) {
	if ago, ok := strings.CutPrefix(v, "-"); ok {
		d, err := parseAgo(ago)
		if err == nil {
			return now.Add(-d), nil
		}
	}
	if strings.EqualFold(v, "now") {
		return now, nil
	}
	loc := now.Location()
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, v, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("want a time such as 2026-11-30T08:00:00Z, 2026-11-30 08:00, 2026-11-30 or -2h, not %q", v)
}

// parseAgo reads a Go duration, with d for days: 2h, 90m, 1d12h.
func parseAgo(s string) (time.Duration, error) {
	var total time.Duration
	if i := strings.Index(s, "d"); i > 0 {
		days, err := strconv.Atoi(s[:i])
		if err != nil {
			return 0, err
		}
		total, s = time.Duration(days)*24*time.Hour, s[i+1:]
		if s == "" {
			return total, nil
		}
	}
	d, err := time.ParseDuration(s)
	return total + d, err
}

// qualify expands a short topic name as the clients do (client/naming's rules); a value that
// is no topic name is kept as written, and matches no letter's origin.
func qualify(topic string) string {
	if t, err := naming.ParseTopic(topic); err == nil {
		return t.String()
	}
	return topic
}
