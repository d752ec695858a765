package client

import "testing"

// TestSpareFramesBounded checks the producer's spare SEND frames: a frame kept is handed out
// again for a send it fits, empty, and no more than spareFrameBytes are kept.
func TestSpareFramesBounded(t *testing.T) {
	var s spareFrames
	small := append(make([]byte, 0, 1<<10), "old frame"...)
	s.keep(small)
	s.keep(nil)
	if got := s.take(4 << 10); cap(got) < 4<<10 || len(got) != 0 {
		t.Fatalf("take(4 KiB) = len %d cap %d, want a fresh empty buffer of 4 KiB", len(got), cap(got))
	}
	got := s.take(512)
	if len(got) != 0 || cap(got) != cap(small) || &got[:1][0] != &small[:1][0] {
		t.Fatalf("take(512) = len %d cap %d, want the kept 1 KiB frame, empty", len(got), cap(got))
	}
	if len(s.frames) != 0 || s.bytes != 0 {
		t.Fatalf("after taking the only frame: %d frames, %d bytes kept", len(s.frames), s.bytes)
	}
	for range 2 * spareFrameBytes / (128 << 10) {
		s.keep(make([]byte, 0, 128<<10))
	}
	if s.bytes > spareFrameBytes || s.bytes != len(s.frames)*(128<<10) {
		t.Fatalf("kept %d bytes in %d frames, want at most %d", s.bytes, len(s.frames), spareFrameBytes)
	}
}
