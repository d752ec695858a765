package dlqops

import (
	"context"
	"errors"
	"fmt"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// ErrNoLetter marks a letter id the target's subscription does not hold: no letter there, or
// one it acknowledged already. Nothing is selected; the asker is told so.
var ErrNoLetter = errors.New("no such letter")

// noLetter is an ErrNoLetter worded for the id asked for.
type noLetter struct{ error }

func (noLetter) Is(target error) bool { return target == ErrNoLetter }

// Letter reads the letter id of t's DLQ without consuming (a non-durable reader from its
// entry), and checks that t's subscription still holds it (else ErrNoLetter). An entry that is
// a batch of several letters must be named with its batch index, as the engine would take
// every letter it names: a *Refusal otherwise.
func (t *Target) Letter(ctx context.Context, id client.MessageID) (*client.Message, error) {
	start := client.MessageID{Ledger: id.Ledger, Entry: id.Entry, Partition: -1, BatchIndex: -1}
	page, err := triage.Browse(ctx, t.Client, nil, t.Topic, nil, triage.From{ID: start, HasID: true}, int(max(id.BatchIndex, 0))+1)
	if err != nil {
		return nil, err
	}
	var m *client.Message
	for _, pm := range page.Messages {
		if pm.ID.Ledger == id.Ledger && pm.ID.Entry == id.Entry && (id.BatchIndex < 0 || pm.ID.BatchIndex == id.BatchIndex) {
			m = pm
			break
		}
	}
	name := triage.PositionOf(id).String()
	switch {
	case m == nil:
		return nil, noLetter{fmt.Errorf("%s holds no letter %s", naming.ShortName(t.Topic, naming.DefaultNamespaceName), name)}
	case id.BatchIndex < 0 && m.ID.BatchSize > 1:
		return nil, refusef("%s is a batch of %d letters: name one, %d:%d:0:B (B from 0 to %d)",
			name, m.ID.BatchSize, id.Ledger, id.Entry, m.ID.BatchSize-1)
	}
	cur, err := triage.ReadCursor(ctx, t.Admin, t.Topic, t.Sub)
	if err != nil {
		return nil, err
	}
	if cur.Acked(triage.PositionOf(m.ID)) {
		return nil, noLetter{fmt.Errorf("%s was acknowledged on %s already", name, t.Sub)}
	}
	return m, nil
}
