// Package testwait is how tests wait for something that happens on another goroutine or in
// another process: For polls a condition until it holds and ForNil until it returns nil,
// failing the test after a deadline, instead of sleeping. It imports nothing of letterbox, so
// that the tests of every package, internal ones included, wait the same way.
//
// Test code only: no package of the binary imports it.
package testwait

import (
	"testing"
	"time"
)

// every is how often a condition is polled.
const every = 10 * time.Millisecond

// For polls cond every 10 ms until it holds, failing the test after d with what.
func For(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(every)
	}
}

// ForNil polls cond every 10 ms until it returns nil, failing the test after d with what and
// the last error cond returned.
func ForNil(t testing.TB, d time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s: %v", d, what, err)
		}
		time.Sleep(every)
	}
}
