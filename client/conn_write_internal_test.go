package client

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// TestWriteKeepsOrderAcrossLargeFrames writes a stream of small commands, copied into the write
// buffer, and large frames, queued as they are, and checks that the peer reads them in the
// order written, whole.
func TestWriteKeepsOrderAcrossLargeFrames(t *testing.T) {
	ours, peer := net.Pipe()
	defer peer.Close()
	c := &conn{nc: ours, wsig: make(chan struct{}, 1), done: make(chan struct{})}
	c.wg.Add(1)
	go c.writeLoop()
	defer func() {
		close(c.done)
		ours.Close()
		c.wg.Wait()
	}()

	r := rand.New(rand.NewPCG(1, 2))
	var want bytes.Buffer
	for i := range 500 {
		n := 1 + r.IntN(64)
		if r.IntN(4) == 0 {
			n = writeByReference + r.IntN(writeByReference)
		}
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(i + j)
		}
		want.Write(b)
		if err := c.write(b); err != nil {
			t.Fatal(err)
		}
	}
	got := make([]byte, want.Len())
	peer.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.ReadFull(peer, got); err != nil {
		t.Fatalf("read %d bytes: %v", want.Len(), err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		i := 0
		for i < len(got) && got[i] == want.Bytes()[i] {
			i++
		}
		t.Fatalf("the peer read something else from byte %d of %d", i, len(got))
	}
}
