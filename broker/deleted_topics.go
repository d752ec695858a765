package broker

import (
	"time"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// PIP-139, as docs/design.md fixes it: deleting a topic or a namespace closes its producers and
// consumers with allow_reconnect=false (extension field 1000) and a reason. Official clients
// ignore the field and reconnect, so deletion must also stop them from bringing the topic back:
//   - a deleted topic leaves a tombstone for TopicTombstoneTTL during which auto-creation of that
//     name is refused with TopicNotFound (which also ends the Go client's reconnect loop);
//   - a namespace being deleted is terminated first: nothing can auto-create topics in it while
//     its topics are deleted, so the deletion cannot lose a race with reconnecting clients.
// Creating the topic explicitly (admin API) lifts its tombstone.

// tombstones and terminated namespaces live in topicRegistry; these methods need r.mu held.

func (r *topicRegistry) bury(full string) {
	if r.tombstones == nil {
		r.tombstones = make(map[string]time.Time)
	}
	now := time.Now()
	r.tombstones[full] = now.Add(r.b.cfg.TopicTombstoneTTL)
	// Drop expired ones so the map stays small however many topics are deleted.
	for k, until := range r.tombstones {
		if now.After(until) {
			delete(r.tombstones, k)
		}
	}
}

func (r *topicRegistry) unbury(full string) { delete(r.tombstones, full) }

// refuseAutoCreate says why name may not be auto-created now, or nil.
func (r *topicRegistry) refuseAutoCreate(name naming.Topic) *serverError {
	if r.terminatedNS[name.NamespaceName()] {
		return errorf(pb.ServerError_TopicNotFound, "Namespace %s is being deleted", name.NamespaceName())
	}
	for _, full := range []string{name.String(), name.Base().String()} {
		if until, ok := r.tombstones[full]; ok {
			if time.Now().Before(until) {
				return errorf(pb.ServerError_TopicNotFound, "Topic %s was deleted and cannot be re-created automatically for %s",
					full, time.Until(until).Round(time.Second))
			}
			delete(r.tombstones, full)
		}
	}
	return nil
}

// terminateNamespace stops auto-creation in ns until finishNamespaceDeletion.
func (r *topicRegistry) terminateNamespace(ns string) {
	if r.terminatedNS == nil {
		r.terminatedNS = make(map[string]bool)
	}
	r.terminatedNS[ns] = true
}

func (r *topicRegistry) finishNamespaceDeletion(ns string) { delete(r.terminatedNS, ns) }
