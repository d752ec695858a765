package main

// Rounds: every part that repeats a run reports the median of its rounds and how far they
// spread, never the best round, which one lucky round would decide. A product beside its
// ceiling or a reference (the in-memory and the durable broker beside the null broker, our
// client beside the official one, the replay beside producing its letters, the scan beside a
// bare reader) runs round by round beside it, and its verdict takes the median of the rounds'
// ratios, each round's product figure over the figure measured next to it: what disturbed
// one round weighs on both sides of its ratio.

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// medianF is the middle of v, or the mean of the two middle values when there are an even
// number of them; v must not be empty.
func medianF(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[n/2]
}

// median is medianF for durations.
func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	n := len(s)
	if n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[n/2]
}

// perRound returns f of every round that measured it (ok), in the rounds' order. For a
// ratio, f returns the round's product figure over the figure that ran beside it, and not ok
// when either was not measured or the reference is zero.
func perRound[R any](rounds []R, f func(R) (float64, bool)) []float64 {
	var out []float64
	for _, r := range rounds {
		if v, ok := f(r); ok {
			out = append(out, v)
		}
	}
	return out
}

// ratioOf is num/den, not ok when den is not positive.
func ratioOf(num, den float64) (float64, bool) {
	if den <= 0 {
		return 0, false
	}
	return num / den, true
}

// spreadFrac is how far the values spread, (max − min) / median; 0 for fewer than two or a
// median that is not positive.
func spreadFrac(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	m := medianF(v)
	if m <= 0 {
		return 0
	}
	return (slices.Max(v) - slices.Min(v)) / m
}

// spread is "a, b, c (spread x % of the median)" of per-round values shown by f; a single
// value is shown alone.
func spread(v []float64, f func(float64) string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = f(x)
	}
	out := strings.Join(s, ", ")
	if len(v) > 1 && medianF(v) > 0 {
		out += fmt.Sprintf(" (spread %.0f %% of the median)", 100*spreadFrac(v))
	}
	return out
}

// byRound is a table cell of per-round values: their median shown by f with unit, then every
// round's value and their spread, "213,244 msg/s; by round 159,790, 213,244, 244,751 (spread
// 40 % of the median)"; a single round's value alone. v must not be empty.
func byRound(v []float64, f func(float64) string, unit string) string {
	out := f(medianF(v)) + unit
	if len(v) > 1 {
		out += "; by round " + spread(v, f)
	}
	return out
}

// ofRounds names how a figure of n rounds was taken, for a metric's name.
func ofRounds(n int) string {
	if n == 1 {
		return "one round"
	}
	return fmt.Sprintf("median of %d rounds", n)
}

// ofRatios names how a ratio of n paired rounds was taken, for a metric's name.
func ofRatios(n int) string {
	if n == 1 {
		return "one round"
	}
	return fmt.Sprintf("median of %d rounds' ratios", n)
}

// percent shows a ratio as a percentage, "86.0 %"; times as a multiple, "1.42×".
func percent(x float64) string { return fmt.Sprintf("%.1f %%", 100*x) }
func times(x float64) string   { return fmt.Sprintf("%.2f×", x) }
