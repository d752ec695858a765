package data

import (
	"strconv"
	"strings"
)

// TopicName is a parsed topic name.
type TopicName struct {
	Domain    string // persistent or non-persistent
	Tenant    string
	Namespace string // without the tenant
	Local     string
}

// ParseTopic parses "persistent://t/ns/x", "t/ns/x" or a bare "x" (public/default).
func ParseTopic(s string) TopicName {
	n := TopicName{Domain: "persistent", Tenant: "public", Namespace: "default"}
	if i := strings.Index(s, "://"); i >= 0 {
		n.Domain, s = s[:i], s[i+3:]
	}
	parts := strings.SplitN(s, "/", 3)
	switch len(parts) {
	case 3:
		n.Tenant, n.Namespace, n.Local = parts[0], parts[1], parts[2]
	case 2: // "ns/x" is not a valid short form; keep it whole
		n.Local = s
	default:
		n.Local = s
	}
	return n
}

// String is the full name.
func (n TopicName) String() string {
	return n.Domain + "://" + n.Tenant + "/" + n.Namespace + "/" + n.Local
}

// NS is "tenant/namespace".
func (n TopicName) NS() string { return n.Tenant + "/" + n.Namespace }

// PartitionOf splits "x-partition-3" into ("x", 3); ok is false for other names.
func PartitionOf(name string) (parent string, index int, ok bool) {
	i := strings.LastIndex(name, "-partition-")
	if i < 0 {
		return "", 0, false
	}
	idx, err := strconv.Atoi(name[i+len("-partition-"):])
	if err != nil || idx < 0 {
		return "", 0, false
	}
	return name[:i], idx, true
}

// ShortName drops "persistent://" and, when it is ns, the namespace: what a screen shows.
func ShortName(full, ns string) string {
	n := ParseTopic(full)
	s := n.NS() + "/" + n.Local
	if n.Domain != "persistent" {
		s = n.Domain + "://" + s
	}
	if ns != "" && n.NS() == ns && n.Domain == "persistent" {
		return n.Local
	}
	return s
}
