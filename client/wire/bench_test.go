package wire

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// benchPayload is headersAndPayload for one message with a 1 KiB body.
func benchPayload(b *testing.B) []byte {
	b.Helper()
	meta := &pb.MessageMetadata{
		ProducerName: proto.String("standalone-0-1"),
		SequenceId:   proto.Uint64(42),
		PublishTime:  proto.Uint64(1_700_000_000_000),
	}
	p, err := AppendPayload(nil, meta, bytes.Repeat([]byte{'x'}, 1<<10))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkDecodeFrame(b *testing.B) {
	frame := mustFrame(b, messageCmd(), benchPayload(b))
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeFrame(frame); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendCommand(b *testing.B) {
	hp := benchPayload(b)
	cmd := sendCmd()
	buf := make([]byte, 0, 2<<10)
	b.SetBytes(int64(len(mustFrame(b, cmd, hp))))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendCommand(buf[:0], cmd, hp); err != nil {
			b.Fatal(err)
		}
	}
}
