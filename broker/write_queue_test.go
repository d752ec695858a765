package broker_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Consumers that read their messages only after the broker has queued megabytes for them: the
// write queues then run over many chunks, which go back to the broker's pool after each write
// and are reused by either connection. Every message must arrive once, in order, intact,
// whether it was copied into a chunk or queued by reference (4 KiB and more).
func TestLongWriteQueues(t *testing.T) {
	b := startRawBroker(t, nil)
	topic := rawTopic(t)
	sizes := []int{100, 1500, 3000, 5000, 9000, 700}
	payloads := make([]string, 3000)
	for i := range payloads {
		p := []byte(fmt.Sprintf("%06d:", i))
		p = append(p, bytes.Repeat([]byte{byte('a' + i%26)}, sizes[i%len(sizes)])...)
		payloads[i] = string(p)
	}
	pc, _ := connectRaw(t, b, rawClientVersion, 21)
	pc.produce(topic, payloads...)

	var consumers []*rawConn
	for k := range 2 {
		c, _ := connectRaw(t, b, rawClientVersion, 21)
		c.subscribe(&pb.CommandSubscribe{Topic: proto.String(topic), Subscription: proto.String(fmt.Sprint("s", k)),
			SubType: pb.CommandSubscribe_Exclusive.Enum(), ConsumerId: proto.Uint64(1),
			InitialPosition: pb.CommandSubscribe_Earliest.Enum()})
		c.flow(1, uint32(len(payloads)))
		consumers = append(consumers, c)
	}
	time.Sleep(300 * time.Millisecond) // let the broker queue what the sockets cannot take
	for k, c := range consumers {
		for i, want := range payloads {
			m := c.expectMessage()
			if string(m.Payload) != want {
				t.Fatalf("consumer %d: message %d is %.12q… (%d bytes), want %.12q… (%d bytes)",
					k, i, m.Payload, len(m.Payload), want, len(want))
			}
		}
	}
}
