package client

import "sync"

// msgQueue is an unbounded FIFO of messages that never blocks its producers (connection
// readers); flow control bounds how much it can hold.
type msgQueue struct {
	mu   sync.Mutex
	msgs []*Message
	head int
	sig  chan struct{}
}

func newMsgQueue() *msgQueue { return &msgQueue{sig: make(chan struct{}, 1)} }

func (q *msgQueue) push(ms ...*Message) {
	if len(ms) == 0 {
		return
	}
	q.mu.Lock()
	q.msgs = append(q.msgs, ms...)
	q.mu.Unlock()
	q.wake()
}

// wake signals one waiter.
func (q *msgQueue) wake() {
	select {
	case q.sig <- struct{}{}:
	default:
	}
}

// pop returns the next message, or nil when empty (then wait on q.sig).
func (q *msgQueue) pop() *Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == len(q.msgs) {
		return nil
	}
	m := q.msgs[q.head]
	q.msgs[q.head] = nil
	q.head++
	if q.head == len(q.msgs) {
		q.msgs, q.head = q.msgs[:0], 0
	} else if q.head > 1024 && q.head*2 > len(q.msgs) {
		n := copy(q.msgs, q.msgs[q.head:])
		clear(q.msgs[n:])
		q.msgs, q.head = q.msgs[:n], 0
	}
	return m
}

func (q *msgQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.msgs) - q.head
}
