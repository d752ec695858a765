package client

import "testing"

// TestSpareFramesBounded checks the producer's spare SEND frames: a frame kept is handed out
// again for a send it fits, empty, and no more than spareFrameBytes are kept.
func TestSpareFramesBounded(t *testing.T) {
	var s spareFrames
	small := append(make([]byte, 0, 1<<10), "old frame"...)
	s.keep(small, false)
	s.keep(nil, false)
	got := s.take(512)
	if len(got) != 0 || cap(got) != cap(small) || &got[:1][0] != &small[:1][0] {
		t.Fatalf("take(512) = len %d cap %d, want the kept 1 KiB frame, empty", len(got), cap(got))
	}
	if len(s.frames) != 0 || s.bytes != 0 {
		t.Fatalf("after taking the only frame: %d frames, %d bytes kept", len(s.frames), s.bytes)
	}
	if got := s.take(4 << 10); cap(got) < 4<<10 || len(got) != 0 {
		t.Fatalf("take(4 KiB) = len %d cap %d, want a fresh empty buffer of 4 KiB", len(got), cap(got))
	}
	for range 2 * spareFrameBytes / (128 << 10) {
		s.keep(make([]byte, 0, 128<<10), false)
	}
	if s.bytes > spareFrameBytes || s.bytes != len(s.frames)*(128<<10) {
		t.Fatalf("kept %d bytes in %d frames, want at most %d", s.bytes, len(s.frames), spareFrameBytes)
	}
}

// TestSpareFramesGrowingSends checks that sends whose frames grow by a few bytes, as they do
// when the sequence ids reach a longer varint, still reuse the frames kept: frames made to the
// byte fitted no later send, and every send made a new frame.
func TestSpareFramesGrowingSends(t *testing.T) {
	const window = 100 // sends awaiting their receipts
	var s spareFrames
	made, _ := sendInWindow(&s, 10_000, window, false, func(i int) int {
		if i >= 5_000 {
			return 1125 // sequence ids past 16,383 take a byte more, in the SEND and in the metadata
		}
		return 1123
	})
	if made > window+1 {
		t.Fatalf("%d of 10,000 sends made a frame, want only the first window's, %d", made, window+1)
	}
}

// TestSpareFramesOutgrown checks that a spare list full of frames too small for the sends now
// made makes room for frames of the new size, rather than leaving every send to make its own.
func TestSpareFramesOutgrown(t *testing.T) {
	const window = 100
	var s spareFrames
	for s.bytes+128 <= spareFrameBytes {
		s.keep(make([]byte, 0, 128), false)
	}
	made, _ := sendInWindow(&s, 10_000, window, false, func(int) int { return 1 << 10 })
	if made > window+1 {
		t.Fatalf("%d of 10,000 sends of 1 KiB made a frame, want only the first window's, %d", made, window+1)
	}
}

// TestSpareFramesWindowOfBatches checks a producer with dozens of full batches in flight (a
// replay's window of 4096 letters of 1 KiB): once the first window is receipted, its sends
// reuse the frames of those receipted, and once nothing is in flight it keeps no more than
// spareFrameBytes.
func TestSpareFramesWindowOfBatches(t *testing.T) {
	const window, batch = 32, 128 << 10
	var s spareFrames
	made, inFlight := sendInWindow(&s, 1_000, window, true, func(int) int { return batch })
	if made > window+1 {
		t.Fatalf("%d of 1,000 sends made a frame, want only the first window's, %d", made, window+1)
	}
	for i, f := range inFlight {
		s.keep(f, i < len(inFlight)-1)
	}
	if s.bytes > spareFrameBytes || s.bytes != spareSum(s.frames) {
		t.Fatalf("with nothing in flight: %d bytes kept (%d counted), want at most %d", spareSum(s.frames), s.bytes, spareFrameBytes)
	}
}

func spareSum(frames [][]byte) int {
	n := 0
	for _, f := range frames {
		n += cap(f)
	}
	return n
}

// sendInWindow takes a frame of size(i) bytes for each of n sends, with window of them
// awaiting their receipts, which come in order and give the frames back (busy: with sends
// still in flight). It returns how many sends made a frame of their own, and the frames still
// in flight at the end.
func sendInWindow(s *spareFrames, n, window int, busy bool, size func(i int) int) (made int, inFlight [][]byte) {
	kept := map[*byte]bool{}
	for i := range n {
		f := s.take(size(i))
		if !kept[&f[:1][0]] {
			made++
		}
		inFlight = append(inFlight, f)
		if len(inFlight) > window {
			kept[&inFlight[0][:1][0]] = true
			s.keep(inFlight[0], busy)
			inFlight = inFlight[1:]
		}
	}
	return made, inFlight
}
