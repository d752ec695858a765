package dlqops

import (
	"context"
	"fmt"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
	"github.com/letterbox-dev/letterbox/client/triage"
)

// Purge clears sub's whole backlog on dlq through the admin API (letters that arrive meanwhile
// included) and says how many letters went: the backlog it had, where the broker counts
// letters (-1 where it does not).
func Purge(ctx context.Context, ad *admin.Client, dlq, sub string) (int64, error) {
	var letters int64 = -1
	if b, err := triage.ReadBacklog(ctx, ad, dlq, sub); err == nil && b.LettersKnown {
		letters = b.Letters
	}
	return letters, ad.ClearBacklog(ctx, dlq, sub)
}

// Skip acknowledges the first n letters of sub's backlog on dlq, each message of a batch one,
// by id through the replay engine as a discard of the first n (the admin API's skip counts
// entries, a batch being one); refused (CheckBatches) on a broker that cannot acknowledge part
// of the batch the n-th letter ends in. It says how many letters went.
func Skip(ctx context.Context, ad *admin.Client, cl *client.Client, dlq, sub string, n int64) (int64, error) {
	opts, err := Prepare(ctx, ad, Request{DLQ: dlq, Subscription: sub, Discard: true, Limit: n, Selected: n})
	if err != nil {
		return 0, err
	}
	if err := CheckBatches(ctx, cl, opts); err != nil {
		return 0, err
	}
	sum, err := Run(ctx, cl, opts, nil)
	switch {
	case err != nil:
		return sum.Discarded, err
	case !sum.OK():
		return sum.Discarded, fmt.Errorf("%d of the first %d letters were not acknowledged", sum.Failed, n)
	}
	return sum.Discarded, nil
}

// Subscribe creates the durable subscription sub on dlq at its earliest retained letter, so
// that nothing that arrives from then on is lost.
func Subscribe(ctx context.Context, ad *admin.Client, dlq, sub string) error {
	return ad.CreateSubscription(ctx, dlq, sub, adminapi.Earliest)
}
