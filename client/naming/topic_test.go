package naming

import (
	"regexp"
	"testing"
)

// InNamespace says what comparing NamespaceName says, for V1 and V2 names and namespaces that
// share a prefix with the topic's.
func TestInNamespaceAgreesWithNamespaceName(t *testing.T) {
	topics := []string{"persistent://public/default/a", "persistent://pub/def/a", "non-persistent://t/c/ns/x", "persistent://public/default-2/a"}
	nss := []string{"public/default", "public/default-2", "public/def", "pub/def", "public", "t/c/ns", "t/ns", "t/c", "", "/", "public/default/"}
	for _, s := range topics {
		tp, err := ParseTopic(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, ns := range nss {
			if got, want := tp.InNamespace(ns), tp.NamespaceName() == ns; got != want {
				t.Errorf("%s.InNamespace(%q) = %v, want %v", s, ns, got, want)
			}
		}
	}
}

// ValidNamePart is upstream's [-=:.\w]+ (NamedEntity), written as a loop: it agrees with the
// expression on every byte alone and on names mixing valid and invalid ones, Unicode letters
// (not \w) included.
func TestValidNamePartAgreesWithTheExpression(t *testing.T) {
	rule := regexp.MustCompile(`^[-=:.\w]+$`)
	cases := []string{"", "public", "my-ns_2", "a=b:c.d", "a/b", "a b", "ünï", "ns\n", "\x00", "-", "ns$", "x.y.z"}
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}), "ns"+string([]byte{byte(c)})+"x")
	}
	for _, s := range cases {
		if got, want := ValidNamePart(s), rule.MatchString(s); got != want {
			t.Errorf("ValidNamePart(%q) = %v, the expression says %v", s, got, want)
		}
	}
}
