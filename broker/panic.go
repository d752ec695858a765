package broker

import (
	"fmt"
	"runtime/debug"
)

// Panic containment. A panic while handling one connection's command must not end the process
// for every client: it is logged with its stack, at Error level with the message "panic
// contained", and closes that connection; the process stays up. The goroutines that run
// broker code on a client's behalf recover at their top: the connection's reader (each
// command in conn.handleFrame, and the loop around them), its writer, keepalive and
// authentication refresh, the goroutines that close it (closeLater) and forget it once closed,
// an interceptor's delayed send, each topic's dispatcher (topic.dispatchRound), the completion
// of a stored SEND (topic.publish), and the broker's own loops (guard).
//
// Locks are released on the way out because every lock taken around code that can panic is
// released by a deferred unlock (topic.locked, and defer in the handlers): a contained panic
// leaves no topic locked for the others.
//
// A panic while sending to a connection (conn.sendHeld: the test interceptor, encoding) is
// blamed on that connection, which need not be the one whose command was being handled: a
// dispatcher delivering to a consumer, or a handler telling another connection's consumer it
// became active. The blamed connection is closed too, so that the next dispatch does not
// meet the same panic again.

// connPanic carries a panic and its stack up from a send, naming the connection it concerns.
type connPanic struct {
	c     *conn
	value any
	stack []byte
}

// blame wraps a panic recovered while sending to c (unless a deeper send already did).
func (c *conn) blame(r any) *connPanic {
	if cp, ok := r.(*connPanic); ok {
		return cp
	}
	return &connPanic{c: c, value: r, stack: debug.Stack()}
}

// recoverPanic, deferred at the top of a goroutine's unit of work, contains a panic: logs it
// with its stack and closes c (the connection whose work it was, nil if none) and the
// connection a send blamed. It must be called by defer directly.
func (b *Broker) recoverPanic(what string, c *conn) {
	if r := recover(); r != nil {
		b.contain(r, what, c)
	}
}

// contain logs the panic r and closes the connections it concerns. The closes run on their
// own goroutines: whoever recovered may still hold locks of its caller (a store completing
// an append), which closing a connection could need.
func (b *Broker) contain(r any, what string, c *conn) {
	stack := debug.Stack()
	blamed := (*conn)(nil)
	if cp, ok := r.(*connPanic); ok {
		r, stack, blamed = cp.value, cp.stack, cp.c
	}
	attrs := []any{"while", what, "panic", fmt.Sprint(r), "stack", string(stack)}
	if c != nil {
		attrs = append(attrs, "remote", c.remote)
	}
	if blamed != nil && blamed != c {
		attrs = append(attrs, "sending_to", blamed.remote)
	}
	b.log.Error("panic contained", attrs...)
	b.panics.Add(1)
	for _, cc := range []*conn{c, blamed} {
		if cc != nil {
			b.closeLater(cc, "panic while "+what)
		}
	}
}

// closeLater closes c on a goroutine of its own, which contains a panic as the handlers do:
// closing releases c's consumers, which can make another consumer of a Failover subscription
// the active one and send it ACTIVE_CONSUMER_CHANGE, a send that may panic in turn. A panic
// there closes the connection it is blamed on; c's own close is not tried again.
func (b *Broker) closeLater(c *conn, reason string) {
	go func() {
		defer b.recoverPanic("closing a connection ("+reason+")", c)
		c.close(reason)
	}()
}

// guard runs fn, containing a panic: for the broker's own loops, which serve no connection.
func (b *Broker) guard(what string, fn func()) {
	defer b.recoverPanic(what, nil)
	fn()
}
