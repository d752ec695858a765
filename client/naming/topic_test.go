package naming

import "testing"

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
