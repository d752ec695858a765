package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"google.golang.org/protobuf/proto"
)

// fuzzMaxFrame bounds frames in the fuzz target. Reader.Next allocates up to this much for a
// declared size before reading the body, so keep it small enough not to slow every run down.
const fuzzMaxFrame = 64 << 10

// FuzzDecodeFrame feeds arbitrary bytes to DecodeFrame and Reader.Next. Neither may panic; a
// frame that decodes must re-encode to one that decodes to an equal command (compared with
// proto.Equal: the bytes may legitimately differ, e.g. field order or repeated scalars); and
// Reader.Next must agree with FrameLength + DecodeFrame on how the bytes split into frames.
//
// testdata/fuzz/FuzzDecodeFrame holds real frames in the corpus file format as well: CONNECT,
// a SEND with a batch, a MESSAGE with broker entry metadata, PING and a truncated SEND.
func FuzzDecodeFrame(f *testing.F) {
	frames := validFrames(f)
	var stream []byte
	for _, fr := range frames {
		f.Add(fr.frame)
		stream = append(stream, fr.frame...)
	}
	f.Add(stream)
	var send []byte
	for _, fr := range frames {
		if fr.name == "send batch" {
			send = fr.frame
		}
	}
	f.Add(send[:len(send)/2]) // truncated: the header declares more than follows
	cut := bytes.Clone(send[:len(send)-3])
	binary.BigEndian.PutUint32(cut, uint32(len(cut)-4)) // truncated, header rewritten to match
	f.Add(cut)
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 4, 0, 0, 0, 0})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})

	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := DecodeFrame(data)
		checkDecoded(t, fr, err)
		if errors.Is(err, ErrChecksumMismatch) {
			// Mutations almost never keep the CRC right; fix it up so that the metadata and
			// batch parsing behind it get explored too.
			if p := withCRC(bytes.Clone(fr.Payload)); VerifyPayload(p) == nil {
				checkPayload(t, p)
			}
		}
		checkReader(t, data)
	})
}

// checkDecoded checks one result of DecodeFrame.
func checkDecoded(t *testing.T, fr Frame, err error) {
	t.Helper()
	if err != nil {
		// With an error, a command may come back only for a sound frame whose payload is bad.
		if fr.Cmd != nil && !errors.Is(err, ErrMissingMagic) && !errors.Is(err, ErrChecksumMismatch) &&
			!errors.Is(err, ErrBadMetadataSize) {
			t.Fatalf("command returned with error %v", err)
		}
		return
	}
	if fr.Cmd == nil {
		t.Fatal("no command and no error")
	}

	var hp []byte
	if fr.BrokerEntry != nil {
		hp = binary.BigEndian.AppendUint16(hp, magicBrokerEntry)
		hp = binary.BigEndian.AppendUint32(hp, uint32(len(fr.BrokerEntry)))
		hp = append(hp, fr.BrokerEntry...)
	}
	hp = append(hp, fr.Payload...)
	again, err := AppendCommand(nil, fr.Cmd, hp)
	if err != nil {
		t.Fatalf("re-encoding a decoded command: %v", err)
	}
	back, err := DecodeFrame(again)
	if err != nil {
		t.Fatalf("re-encoded frame does not decode: %v", err)
	}
	if !proto.Equal(back.Cmd, fr.Cmd) {
		t.Fatalf("command changed in a round trip:\n%v\n%v", fr.Cmd, back.Cmd)
	}
	if !bytes.Equal(back.Payload, fr.Payload) || !bytes.Equal(back.BrokerEntry, fr.BrokerEntry) {
		t.Fatal("payload or broker entry changed in a round trip")
	}
	if fr.Payload != nil {
		checkPayload(t, fr.Payload)
	}
}

// checkPayload round-trips the metadata of a verified payload and, for a batch, its messages.
func checkPayload(t *testing.T, p []byte) {
	t.Helper()
	meta, body, err := ParsePayload(p)
	if err != nil {
		return // metadata that is not a MessageMetadata; the checksum only proves it arrived intact
	}
	again, err := AppendPayload(nil, meta, body)
	if err != nil {
		t.Fatalf("re-encoding decoded metadata: %v", err)
	}
	meta2, body2, err := ParsePayload(again)
	if err != nil || !proto.Equal(meta, meta2) || !bytes.Equal(body, body2) {
		t.Fatalf("payload changed in a round trip (%v)", err)
	}
	if meta.NumMessagesInBatch == nil {
		return
	}
	msgs, err := ParseBatch(body, int(meta.GetNumMessagesInBatch()))
	if err != nil {
		return
	}
	var batch []byte
	for _, m := range msgs {
		if batch, err = AppendBatchMessage(batch, m.Meta, m.Payload); err != nil {
			t.Fatalf("re-encoding a batch message: %v", err)
		}
	}
	msgs2, err := ParseBatch(batch, len(msgs))
	if err != nil {
		t.Fatalf("re-encoded batch does not parse: %v", err)
	}
	for i := range msgs {
		if !proto.Equal(msgs[i].Meta, msgs2[i].Meta) || !bytes.Equal(msgs[i].Payload, msgs2[i].Payload) {
			t.Fatalf("batch message %d changed in a round trip", i)
		}
	}
}

// checkReader reads data with Reader.Next and checks each result against FrameLength and
// DecodeFrame on the same bytes.
func checkReader(t *testing.T, data []byte) {
	t.Helper()
	r := NewReader(bytes.NewReader(data), fuzzMaxFrame)
	for off := 0; ; {
		got, gotErr := r.Next()
		n, ok, lenErr := FrameLength(data[off:], fuzzMaxFrame)
		switch {
		case lenErr != nil:
			if gotErr == nil || gotErr.Error() != lenErr.Error() {
				t.Fatalf("at %d: Next = %v, FrameLength = %v", off, gotErr, lenErr)
			}
			return
		case off == len(data):
			if gotErr != io.EOF {
				t.Fatalf("at the end: Next = %v, want io.EOF", gotErr)
			}
			return
		case !ok || n > len(data)-off:
			if !errors.Is(gotErr, io.ErrUnexpectedEOF) {
				t.Fatalf("at %d, %d bytes left: Next = %v, want io.ErrUnexpectedEOF", off, len(data)-off, gotErr)
			}
			return
		}
		want, wantErr := DecodeFrame(data[off : off+n])
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("at %d: Next = %v, DecodeFrame = %v", off, gotErr, wantErr)
		}
		if !proto.Equal(got.Cmd, want.Cmd) || !bytes.Equal(got.Payload, want.Payload) ||
			!bytes.Equal(got.BrokerEntry, want.BrokerEntry) {
			t.Fatalf("at %d: Next and DecodeFrame disagree", off)
		}
		off += n
	}
}
