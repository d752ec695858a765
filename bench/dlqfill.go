package main

// Filling a DLQ the way dead-letter routers do, for the parts that read one back (the TUI's
// browsing in tui.go, the scan in scan.go): one home for how a bench DLQ is written, so that
// their figures describe the same kind of topic.

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/letterbox-dev/letterbox/client"
)

// dlqFill is a DLQ to fill: n letters, letter(i) the i-th of them.
type dlqFill struct {
	topic string
	// sub is the subscription the producer creates before its first letter
	// (InitialSubscriptionName, as the routers' DLQ policy has it), so that the DLQ keeps them.
	sub string
	// producer names the producer; a router's name ("<topic>-<sub>-<consumer>-<rand>-DLQ") is
	// where a scan reads each letter's subscription from. Empty: the broker picks one.
	producer string
	n        int
	letter   func(i int) *client.Message
}

// fillDLQ produces f's letters on the broker at serviceURL, each its own entry as our client's
// and Java's DLQ routers write them (batching off, no compression), as fast as the producer's
// window of receipts allows. It returns the time from the first send to the last receipt, and
// fails, rather than hangs, when the broker falls below a floor rate or refuses a letter.
func fillDLQ(ctx context.Context, serviceURL string, f dlqFill) (time.Duration, error) {
	// A floor of 5,000 letters/s, a tenth of what one entry each takes on the 2-CPU reference
	// machine: anything slower is a broker in trouble, not a slow machine.
	ctx, cancel := context.WithTimeout(ctx, setupTimeout+time.Duration(f.n)*200*time.Microsecond)
	defer cancel()
	cl, err := client.New(client.Options{ServiceURL: serviceURL, OperationTimeout: 10 * time.Second, Logger: ourLogger})
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	prod, err := cl.CreateProducer(ctx, client.ProducerOptions{Topic: f.topic, Name: f.producer, DisableBatching: true,
		InitialSubscriptionName: f.sub, TopicPurpose: client.TopicPurposeDeadLetter})
	if err != nil {
		return 0, fmt.Errorf("DLQ producer: %w", err)
	}
	defer prod.Close()

	// Receipts come in order; one goroutine takes them in turn and keeps the first failure,
	// which Flush alone would not report.
	futures := make(chan *client.SendFuture, 4096)
	var failed atomic.Int64
	var firstErr atomic.Pointer[error]
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		for fu := range futures {
			<-fu.Done()
			if _, err := fu.Result(); err != nil && failed.Add(1) == 1 {
				firstErr.Store(&err)
			}
		}
	}()
	t0 := time.Now()
	for i := range f.n {
		if failed.Load() > 0 || ctx.Err() != nil {
			break
		}
		futures <- prod.SendAsync(ctx, f.letter(i))
	}
	close(futures)
	<-waited
	took := time.Since(t0)
	if e := firstErr.Load(); e != nil {
		return took, fmt.Errorf("producing dead letters: %d failed, the first: %w", failed.Load(), *e)
	}
	if ctx.Err() != nil {
		return took, fmt.Errorf("producing %s dead letters: not done within %v", thousands(f.n), took.Round(time.Second))
	}
	return took, nil
}

// startDLQBroker starts `letterbox broker --in-memory` for a DLQ of a million letters: with
// its memory budget off (--memory-limit 0) where the binary has one, since the default, a
// quarter of the machine's memory, may hold back the fill on a small machine. The parts that
// use it check the machine's free memory themselves. It returns the flags it chose too.
func startDLQBroker(ctx context.Context, bin string) (*brokerProc, []string, error) {
	args := []string{"--in-memory"}
	hctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	// The help lists the flags this build knows; older builds have no budget to turn off.
	if help, _ := exec.CommandContext(hctx, bin, "broker", "--help").CombinedOutput(); strings.Contains(string(help), "--memory-limit") {
		args = append(args, "--memory-limit", "0")
	}
	b, err := startBroker(ctx, bin, args...)
	return b, args, err
}
