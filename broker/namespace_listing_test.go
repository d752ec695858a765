package broker_test

import (
	"slices"
	"testing"
)

// A namespace's listing follows its topics as they are created, unloaded and deleted, and holds
// nothing of another namespace whose name its own begins with: the broker lists a namespace
// from an index kept beside its topics, not by walking them all.
func TestNamespaceListingFollowsItsTopics(t *testing.T) {
	b := startBroker(t)
	for _, ns := range []string{"public/ns", "public/ns-2"} {
		if err := b.CreateNamespace(ns, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{
		"persistent://public/ns/a", "persistent://public/ns/b", "non-persistent://public/ns/c",
		"persistent://public/ns-2/a", "persistent://public/default/a",
	} {
		if err := b.CreateTopic(name, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.CreatePartitionedTopic("persistent://public/ns/p", 2, nil); err != nil {
		t.Fatal(err)
	}
	check := func(when string, persistent bool, want ...string) {
		t.Helper()
		got, err := b.Topics("public/ns", persistent)
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = []string{}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: public/ns lists %q (persistent %v), want %q", when, got, persistent, want)
		}
	}
	check("created", true, "persistent://public/ns/a", "persistent://public/ns/b", "persistent://public/ns/p-partition-0", "persistent://public/ns/p-partition-1")
	check("created", false, "non-persistent://public/ns/c")

	// Unloaded, a persistent topic is still there (stored, opened on first use); a
	// non-persistent one is gone with its messages.
	for _, name := range []string{"persistent://public/ns/a", "non-persistent://public/ns/c"} {
		if err := b.UnloadTopic(name); err != nil {
			t.Fatal(err)
		}
	}
	check("unloaded", true, "persistent://public/ns/a", "persistent://public/ns/b", "persistent://public/ns/p-partition-0", "persistent://public/ns/p-partition-1")
	check("unloaded", false)

	if err := b.DeleteTopic("persistent://public/ns/a", false); err != nil {
		t.Fatal(err)
	}
	if err := b.DeletePartitionedTopic("persistent://public/ns/p", false); err != nil {
		t.Fatal(err)
	}
	check("deleted", true, "persistent://public/ns/b")
	if got, err := b.Topics("public/ns-2", true); err != nil || !slices.Equal(got, []string{"persistent://public/ns-2/a"}) {
		t.Errorf("public/ns-2 lists %q, %v", got, err)
	}
	if err := b.DeleteTopic("persistent://public/ns/b", false); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteNamespace("public/ns", false); err != nil {
		t.Errorf("the emptied namespace: %v", err)
	}
}
