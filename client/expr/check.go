package expr

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// What each field takes, checked as a condition is parsed.

var (
	stringOps = map[string]bool{"=": true, "!=": true, "~": true, "!~": true}
	orderOps  = map[string]bool{"=": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true}
)

// check validates field, operator and value, and compiles what the value needs.
func (p *parser) check(t *term, named bool, fieldAt, opAt, valueAt int) error {
	hasName := t.field == "property" || t.field == "json"
	switch {
	case hasName && !named:
		return p.errAt(fieldAt, t.field+" needs a name: "+t.field+".NAME")
	case !hasName && named:
		return p.errAt(fieldAt, fmt.Sprintf("unknown field %q (fields: %s; quote text to search for it)", strings.TrimRight(p.s[fieldAt:opAt], " \t\r\n"), Fields))
	}
	switch t.field {
	case "key", "property", "json", "reason", "origin", "subscription", "payload", "producer":
		if !stringOps[t.op] {
			return p.errAt(opAt, t.field+" takes =, !=, ~ or !~, not "+t.op)
		}
		if t.op == "~" || t.op == "!~" {
			re, err := regexp.Compile(t.value)
			if err != nil {
				return p.errAt(valueAt, "bad regular expression: "+strings.TrimPrefix(err.Error(), "error parsing regexp: "))
			}
			t.re = re
		}
		if t.field == "origin" && t.re == nil {
			t.value = qualify(t.value)
		}
	case "reconsumes", "version":
		if !orderOps[t.op] {
			return p.errAt(opAt, t.field+" takes =, !=, <, <=, > or >=, not "+t.op)
		}
		n, err := strconv.ParseInt(t.value, 10, 32)
		if err != nil {
			return p.errAt(valueAt, fmt.Sprintf("want a number, not %q", t.value))
		}
		t.n = n
	case "size":
		if !orderOps[t.op] {
			return p.errAt(opAt, "size takes =, !=, <, <=, > or >=, not "+t.op)
		}
		n, canonical, err := parseSize(t.value)
		if err != nil {
			return p.errAt(valueAt, err.Error())
		}
		t.n, t.value = n, canonical
	case "published", "event":
		if !orderOps[t.op] || t.op == "=" || t.op == "!=" {
			return p.errAt(opAt, t.field+" takes <, <=, > or >=, not "+t.op)
		}
		at, err := ParseTime(t.value, p.now)
		if err != nil {
			return p.errAt(valueAt, err.Error())
		}
		t.at = at
	default:
		return p.errAt(fieldAt, fmt.Sprintf("unknown field %q (fields: %s; quote text to search for it)", strings.TrimRight(p.s[fieldAt:opAt], " \t\r\n"), Fields))
	}
	return nil
}

// sizeUnits are the units a size takes, as written back; any case is read.
var sizeUnits = []struct {
	name  string
	bytes float64
}{{"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}}

// parseSize reads a size: a number of bytes, or a number and a unit (10KiB, 1.5 MB); the
// canonical form has the unit as sizeUnits spells it.
func parseSize(v string) (int64, string, error) {
	bad := fmt.Errorf("want a size such as 512, 10KiB or 1.5MB (units B, KB, MB, GB, KiB, MiB, GiB), not %q", v)
	i := 0
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.') {
		i++
	}
	num, unit := v[:i], strings.TrimSpace(v[i:])
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" || num[0] == '.' || num[len(num)-1] == '.' {
		return 0, "", bad
	}
	mult, name := 1.0, ""
	if unit != "" {
		found := false
		for _, u := range sizeUnits {
			if strings.EqualFold(unit, u.name) {
				mult, name, found = u.bytes, u.name, true
			}
		}
		if !found {
			return 0, "", bad
		}
	}
	n := f * mult
	switch {
	case n > 1<<53:
		return 0, "", fmt.Errorf("size %q is larger than any payload", v)
	case n != math.Trunc(n):
		return 0, "", fmt.Errorf("size %q is not a whole number of bytes", v)
	}
	return int64(n), num + name, nil
}
