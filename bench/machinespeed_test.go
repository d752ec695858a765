package main

import (
	"strings"
	"testing"
	"time"
)

// TestMachineSpeedProbe runs a small probe to its end: every figure is a positive reading.
func TestMachineSpeedProbe(t *testing.T) {
	t.Parallel()
	s, err := measureMachineSpeed(4<<20, 200)
	if err != nil {
		t.Fatal(err)
	}
	if s.streamCPU <= 0 || s.streamRate <= 0 || s.pingRTT <= 0 || s.pingCPU <= 0 {
		t.Fatalf("a reading is not positive: %+v", *s)
	}
}

// TestMachineSpeedLine checks the header's line: both readings in their units, and a reading
// not taken said so.
func TestMachineSpeedLine(t *testing.T) {
	t.Parallel()
	before := &machineSpeed{streamCPU: 977 * time.Microsecond, streamRate: 1368.2, pingRTT: 29836 * time.Nanosecond, pingCPU: 31119 * time.Nanosecond}
	r := &report{rounds: 1, window: time.Second, shortWindow: time.Second, speedBefore: before}
	md := r.markdown()
	for _, want := range []string{
		"Before the runs: 1,368 MiB/s at 977 µs of CPU per MiB; 29.8 µs a round trip (31.1 µs of CPU).",
		"After them: not measured.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
