package client_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

func publish(t *testing.T, p *client.Producer, n int) []client.MessageID {
	t.Helper()
	ctx := brokertest.Ctx(t, 10*time.Second)
	var futs []*client.SendFuture
	for i := range n {
		futs = append(futs, p.SendAsync(ctx, &client.Message{Payload: []byte(fmt.Sprint(i))}))
	}
	ids := make([]client.MessageID, n)
	for i, f := range futs {
		id, err := f.Wait(ctx)
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		ids[i] = id
	}
	return ids
}

func TestReader(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	for _, batching := range []bool{false, true} {
		t.Run(fmt.Sprintf("batching=%v", batching), func(t *testing.T) {
			topic := uniqueTopic(t)
			p := mustProducer(t, c, client.ProducerOptions{Topic: topic, DisableBatching: !batching})
			ids := publish(t, p, 10)
			ctx := brokertest.Ctx(t, 20*time.Second)

			read := func(r *client.Reader, want ...int) {
				t.Helper()
				for _, w := range want {
					m, err := r.Next(ctx)
					if err != nil {
						t.Fatalf("next (want %d): %v", w, err)
					}
					if string(m.Payload) != fmt.Sprint(w) {
						t.Fatalf("got %q, want %d", m.Payload, w)
					}
				}
			}
			hasNext := func(r *client.Reader, want bool) {
				t.Helper()
				got, err := r.HasNext(ctx)
				if err != nil || got != want {
					t.Fatalf("HasNext = %v, %v; want %v", got, err, want)
				}
			}

			// Earliest.
			r, err := c.CreateReader(ctx, client.ReaderOptions{Topic: topic, StartMessageID: client.EarliestMessageID()})
			if err != nil {
				t.Fatal(err)
			}
			read(r, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
			hasNext(r, false)
			publish(t, p, 1)
			hasNext(r, true)
			read(r, 0)
			// Seek back to message 3 (inclusive).
			if err := r.Seek(ctx, ids[3]); err != nil {
				t.Fatal(err)
			}
			read(r, 3, 4)
			r.Close()

			// From an id, exclusive and inclusive.
			r, err = c.CreateReader(ctx, client.ReaderOptions{Topic: topic, StartMessageID: ids[5]})
			if err != nil {
				t.Fatal(err)
			}
			read(r, 6, 7)
			r.Close()
			r, err = c.CreateReader(ctx, client.ReaderOptions{Topic: topic, StartMessageID: ids[5], StartMessageIDInclusive: true})
			if err != nil {
				t.Fatal(err)
			}
			read(r, 5, 6)
			r.Close()

			// Latest: nothing until something is published.
			r, err = c.CreateReader(ctx, client.ReaderOptions{Topic: topic, StartMessageID: client.LatestMessageID()})
			if err != nil {
				t.Fatal(err)
			}
			hasNext(r, false)
			publish(t, p, 1)
			hasNext(r, true)
			read(r, 0)
			r.Close()

			// Latest inclusive: the last message.
			r, err = c.CreateReader(ctx, client.ReaderOptions{Topic: topic, StartMessageID: client.LatestMessageID(), StartMessageIDInclusive: true})
			if err != nil {
				t.Fatal(err)
			}
			read(r, 0)
			r.Close()
		})
	}
}

// NextQueued hands over what is queued, in order and as Next would (nothing from before a
// seek), and nothing without waiting when nothing is.
func TestReaderNextQueued(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	topic := uniqueTopic(t)
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic, DisableBatching: true})
	ids := publish(t, p, 10)
	ctx := brokertest.Ctx(t, 20*time.Second)
	r, err := c.CreateReader(ctx, client.ReaderOptions{Topic: topic, StartMessageID: client.EarliestMessageID()})
	if err != nil {
		t.Fatal(err)
	}
	// The first message is waited for by asking again: it is queued once it arrives.
	for {
		m, err := r.NextQueued()
		if err != nil {
			t.Fatal(err)
		}
		if m != nil {
			if string(m.Payload) != "0" {
				t.Fatalf("got %q, want 0", m.Payload)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the first message was never queued")
		case <-time.After(5 * time.Millisecond):
		}
	}
	read := func(want ...int) {
		t.Helper()
		for _, w := range want {
			m, err := r.NextQueued()
			if m == nil && err == nil {
				m, err = r.Next(ctx)
			}
			if err != nil {
				t.Fatalf("next (want %d): %v", w, err)
			}
			if string(m.Payload) != fmt.Sprint(w) {
				t.Fatalf("got %q, want %d", m.Payload, w)
			}
		}
	}
	read(1, 2, 3, 4, 5, 6, 7, 8, 9)
	if m, err := r.NextQueued(); m != nil || err != nil {
		t.Fatalf("past the last message: NextQueued = %v, %v; want nothing", m, err)
	}
	if err := r.Seek(ctx, ids[3]); err != nil {
		t.Fatal(err)
	}
	read(3, 4)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.NextQueued(); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("closed: NextQueued = %v, want ErrClosed", err)
	}
}

func TestReaderSeekByTime(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	c := newClient(t, b)
	topic := uniqueTopic(t)
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic, DisableBatching: true})
	publish(t, p, 3)
	ctx := brokertest.Ctx(t, 10*time.Second)
	// Publish times have millisecond resolution: make sure the next ones are later.
	mark := time.Now().Add(5 * time.Millisecond)
	for time.Now().Before(mark.Add(2 * time.Millisecond)) {
		time.Sleep(time.Millisecond)
	}
	for i := 3; i < 6; i++ {
		if _, err := p.Send(ctx, &client.Message{Payload: []byte(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := c.CreateReader(ctx, client.ReaderOptions{Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m, err := r.Next(ctx)
	if err != nil || string(m.Payload) != "0" {
		t.Fatalf("first: %v %v", m, err)
	}
	if err := r.SeekByTime(ctx, mark); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"3", "4", "5"} {
		m, err := r.Next(ctx)
		if err != nil || string(m.Payload) != want {
			t.Fatalf("after seek: got %v %v, want %s", m, err, want)
		}
	}
}

// A reader acknowledges what it reads, as the official readers do: the broker keeps nothing
// pending for it (the engine of a scan reads millions of letters through one).
func TestReaderAcknowledges(t *testing.T) {
	t.Parallel()
	env := pulsartest.Start(t)
	c := brokertest.NewClient(t, env.ServiceURL())
	topic := uniqueTopic(t)
	p := mustProducer(t, c, client.ProducerOptions{Topic: topic, DisableBatching: true})
	publish(t, p, 50)
	ctx := brokertest.Ctx(t, 20*time.Second)
	r, err := c.CreateReader(ctx, client.ReaderOptions{Topic: topic, SubscriptionName: "reader-acks"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for range 50 {
		if _, err := r.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	brokertest.WaitFor(t, 10*time.Second, "the reader's subscription still holds unacknowledged messages", func() bool {
		st, err := env.Admin().Stats(ctx, topic)
		if err != nil {
			return false
		}
		s, ok := st.Subscriptions["reader-acks"]
		return ok && s.MsgBacklog == 0 && s.UnackedMessages == 0
	})
	// A seek back reads again what was acknowledged.
	if err := r.Seek(ctx, client.EarliestMessageID()); err != nil {
		t.Fatal(err)
	}
	m, err := r.Next(ctx)
	if err != nil || string(m.Payload) != "0" {
		t.Fatalf("after a seek to the earliest: %v, %v", m, err)
	}
}
