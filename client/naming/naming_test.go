package naming

import (
	"errors"
	"strings"
	"testing"
)

func TestParseTopic(t *testing.T) {
	for _, c := range []struct {
		in, full, ns string
		partition    int
	}{
		{"x", "persistent://public/default/x", "public/default", -1},
		{"acme/orders/x", "persistent://acme/orders/x", "acme/orders", -1},
		{"persistent://acme/orders/x-partition-3", "persistent://acme/orders/x-partition-3", "acme/orders", 3},
		{"non-persistent://acme/orders/x", "non-persistent://acme/orders/x", "acme/orders", -1},
		{"persistent://acme/use/orders/x", "persistent://acme/use/orders/x", "acme/use/orders", -1},
		{"x-partition-01", "persistent://public/default/x-partition-01", "public/default", -1},
		{"x-partition-a", "persistent://public/default/x-partition-a", "public/default", -1},
		{"x-partition--1", "persistent://public/default/x-partition--1", "public/default", -1},
		{"persistent://a=b/c:d.e/f g", "persistent://a=b/c:d.e/f g", "a=b/c:d.e", -1},
	} {
		got, err := ParseTopic(c.in)
		if err != nil {
			t.Errorf("ParseTopic(%q): %v", c.in, err)
			continue
		}
		if got.String() != c.full || got.NamespaceName() != c.ns || got.Partition != c.partition {
			t.Errorf("ParseTopic(%q) = %s in %s partition %d, want %s in %s partition %d",
				c.in, got, got.NamespaceName(), got.Partition, c.full, c.ns, c.partition)
		}
	}
	for _, bad := range []string{
		"", "public/default", "a/b/c/d", "bad://public/default/x", "persistent://public/default/",
		"persistent://bad tenant/default/x", "persistent://public/default", "persistent://public//x",
		"persistent://a/b c/ns/x",
	} {
		if _, err := ParseTopic(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseTopic(%q): err %v, want ErrInvalid", bad, err)
		}
	}
}

func TestPartitions(t *testing.T) {
	x, err := ParseTopic("persistent://acme/orders/x")
	if err != nil {
		t.Fatal(err)
	}
	p := x.PartitionTopic(2)
	if p.String() != "persistent://acme/orders/x-partition-2" || p.Partition != 2 || p.Base() != x {
		t.Errorf("partition 2 of %s: %s (%d), base %s", x, p, p.Partition, p.Base())
	}
	for in, want := range map[string]string{"x-partition-0": "x", "x-partition-10": "x", "x-partition-01": "x-partition-01",
		"x-partition-+1": "x-partition-+1", "x": "x", "a-partition-1-partition-2": "a-partition-1"} {
		if got := BaseName(in); got != want {
			t.Errorf("BaseName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseNamespace(t *testing.T) {
	if tn, ns, err := ParseNamespace("acme/orders"); err != nil || tn != "acme" || ns != "orders" {
		t.Errorf("ParseNamespace(acme/orders) = %q %q %v", tn, ns, err)
	}
	for _, bad := range []string{"acme", "acme/", "/orders", "acme/a/b", "a b/c"} {
		if _, _, err := ParseNamespace(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseNamespace(%q): err %v, want ErrInvalid", bad, err)
		}
	}
}

func TestLetterNames(t *testing.T) {
	const ns = "persistent://public/default/"
	if got := DLQName(ns+"orders-partition-1", "billing"); got != ns+"orders-billing-DLQ" {
		t.Errorf("DLQName = %s", got)
	}
	if got := RetryName(ns+"orders", "billing"); got != ns+"orders-billing-RETRY" {
		t.Errorf("RetryName = %s", got)
	}
	for name, want := range map[string]Kind{"a-s-DLQ": DeadLetter, "a-s-RETRY": Retry, "a-s-DLQ-partition-0": DeadLetter,
		"a-dlq": Standard, "a": Standard} {
		if k, _ := LetterKind(name); k != want {
			t.Errorf("LetterKind(%q) = %v, want %v", name, k, want)
		}
	}
	known := []string{ns + "orders", ns + "orders-eu-partition-0"}
	for _, c := range []struct {
		topic, origin, sub string
		kind               Kind
		named              bool
	}{
		{ns + "orders-billing-DLQ", ns + "orders", "billing", DeadLetter, true},
		{ns + "orders-eu-billing-RETRY", ns + "orders-eu", "billing", Retry, true},
		{ns + "a-b-c-DLQ", ns + "a-b", "c", DeadLetter, false},
		{ns + "billing-DLQ", "", "", DeadLetter, false},
		{ns + "orders", "", "", Standard, false},
	} {
		kind, origin, sub, named := FromName(c.topic, known)
		if kind != c.kind || origin != c.origin || sub != c.sub || named != c.named {
			t.Errorf("FromName(%s) = %v %q %q %v, want %v %q %q %v", c.topic, kind, origin, sub, named, c.kind, c.origin, c.sub, c.named)
		}
	}
}

func TestAutoCreatePurpose(t *testing.T) {
	for _, c := range []struct {
		name, declared string
		derived        bool
		want           string
	}{
		{"orders-billing-DLQ", "", true, PurposeDeadLetter},
		{"orders-billing-RETRY", "", true, PurposeRetryLetter},
		{"orders-billing-DLQ", "", false, PurposeStandard},
		{"orders-billing-DLQ", PurposeStandard, false, PurposeStandard},
		{"audit", PurposeDeadLetter, false, PurposeDeadLetter},
		{"audit", PurposeStandard, false, ""},
		{"audit", "", false, ""},
		{"orders-billing-DLQ", PurposeRetryLetter, true, PurposeRetryLetter},
	} {
		if got := AutoCreatePurpose(c.name, c.declared, c.derived); got != c.want {
			t.Errorf("AutoCreatePurpose(%q, %q, %v) = %q, want %q", c.name, c.declared, c.derived, got, c.want)
		}
	}
}

func TestOwnNames(t *testing.T) {
	a, b := OwnReader("scan"), OwnReader("scan")
	if !IsOwn(a) || !strings.HasPrefix(a, "letterbox-scan-") || a == b {
		t.Errorf("OwnReader: %q, %q", a, b)
	}
	for _, name := range []string{"billing", "billing-audit", "reader-abcde", "letterbo-x", ""} {
		if IsOwn(name) {
			t.Errorf("IsOwn(%q)", name)
		}
	}
}
