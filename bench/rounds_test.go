package main

import (
	"math"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{5}, 5},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5}, // even: the mean of the middle two
		{[]float64{1, 1, 100}, 1},    // one outlier does not move it
	} {
		if got := medianF(tc.in); got != tc.want {
			t.Errorf("medianF(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	in := []float64{3, 1, 2}
	medianF(in)
	if in[0] != 3 || in[1] != 1 || in[2] != 2 {
		t.Errorf("medianF sorted its argument: %v", in)
	}
	if got := median([]time.Duration{4, 1, 3, 2}); got != 2 { // (2+3)/2 in whole nanoseconds
		t.Errorf("median of 1..4 ns = %v, want 2ns", got)
	}
	if got := median([]time.Duration{30, 10, 20}); got != 20 {
		t.Errorf("median(30, 10, 20) = %v, want 20ns", got)
	}
}

// TestPerRoundRatios checks that a ratio pairs each round's product figure with the reference
// measured in the same round, skipping rounds that lack either, and that the verdict's median
// is not decided by one lucky round.
func TestPerRoundRatios(t *testing.T) {
	t.Parallel()
	type round struct{ product, ceiling float64 } // 0: not measured
	rounds := []round{{80, 100}, {0, 100}, {90, 0}, {150, 200}, {300, 310}}
	got := perRound(rounds, func(r round) (float64, bool) {
		if r.product == 0 {
			return 0, false
		}
		return ratioOf(r.product, r.ceiling)
	})
	want := []float64{0.8, 0.75, 300.0 / 310}
	if len(got) != len(want) {
		t.Fatalf("ratios = %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("ratios = %v, want %v", got, want)
		}
	}
	if m := medianF(got); m != 0.8 {
		t.Errorf("median ratio = %v, want 0.8", m)
	}
	// The best round of each side would have said 300/310: the lucky third round alone.
	if _, ok := ratioOf(1, 0); ok {
		t.Error("ratioOf(1, 0) is ok")
	}
}

func TestSpread(t *testing.T) {
	t.Parallel()
	if got := spreadFrac([]float64{90, 100, 110}); math.Abs(got-0.2) > 1e-12 {
		t.Errorf("spreadFrac(90, 100, 110) = %v, want 0.2", got)
	}
	if got := spreadFrac([]float64{7}); got != 0 {
		t.Errorf("spreadFrac of one value = %v, want 0", got)
	}
	for _, tc := range []struct {
		in   []float64
		want string
	}{
		{[]float64{0.9}, "90.0 %"},
		{[]float64{0.9, 1, 1.1}, "90.0 %, 100.0 %, 110.0 % (spread 20 % of the median)"},
	} {
		if got := spread(tc.in, percent); got != tc.want {
			t.Errorf("spread(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   []float64
		want string
	}{
		{[]float64{212_000}, "212,000 msg/s"},
		{[]float64{160_000, 213_000, 245_000}, "213,000 msg/s; by round 160,000, 213,000, 245,000 (spread 40 % of the median)"},
	} {
		if got := byRound(tc.in, rate, " msg/s"); got != tc.want {
			t.Errorf("byRound(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got, want := ofRounds(3)+"; "+ofRatios(3)+"; "+ofRatios(1), "median of 3 rounds; median of 3 rounds' ratios; one round"; got != want {
		t.Errorf("labels = %q, want %q", got, want)
	}
}
