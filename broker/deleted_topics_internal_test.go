package broker

import (
	"testing"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// While a namespace is being deleted nothing attaches to it: no new topic, and no producer or
// consumer on a topic that still exists until the deletion reaches it.
func TestTerminatedNamespaceRefusesEverything(t *testing.T) {
	b, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	existing, _ := parseTopicName("persistent://public/default/existing")
	fresh, _ := parseTopicName("persistent://public/default/fresh")
	if _, serr := b.topics.get(existing, true, ""); serr != nil {
		t.Fatal(serr)
	}
	r := b.topics
	r.mu.Lock()
	r.terminateNamespace("public/default")
	r.mu.Unlock()
	for _, name := range []naming.Topic{existing, fresh} {
		if _, serr := r.get(name, true, ""); serr == nil || serr.code != pb.ServerError_TopicNotFound {
			t.Errorf("%s in a namespace being deleted: %v, want TopicNotFound", name, serr)
		}
	}
	if _, serr := r.partitionedMetadata(fresh, true); serr == nil {
		t.Errorf("partitioned metadata auto-created %s in a namespace being deleted", fresh)
	}
	r.mu.Lock()
	r.finishNamespaceDeletion("public/default")
	r.mu.Unlock()
	if _, serr := r.get(existing, true, ""); serr != nil {
		t.Errorf("after the deletion was called off: %v", serr)
	}
}
