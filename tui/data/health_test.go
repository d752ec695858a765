package data

import (
	"slices"
	"testing"
	"time"
)

func TestJudgeHealthMessageTTL(t *testing.T) {
	kept := &TopicDetail{Subscriptions: []Subscription{{Name: "billing-replay"}}}
	unread := &TopicDetail{}
	tests := []struct {
		name  string
		in    HealthInput
		warns []string
		ok    string
	}{
		{"no TTL", HealthInput{DLQ: kept, RetentionKnown: true}, nil, "healthy: kept by billing-replay"},
		{"a TTL", HealthInput{DLQ: kept, RetentionKnown: true, Retention: Retention{TTL: 7 * 24 * time.Hour}},
			[]string{"dead letters expire after 7d (message TTL)"}, ""},
		{"a TTL, and nobody subscribed", HealthInput{DLQ: unread, RetentionKnown: true, Retention: Retention{TTL: time.Hour}},
			[]string{"no subscription and no retention: dead letters are being lost"}, ""},
	}
	for _, tt := range tests {
		h := JudgeHealth(tt.in)
		if !slices.Equal(h.Warnings, tt.warns) || h.OK != tt.ok {
			t.Errorf("%s: %+v, want warnings %q, ok %q", tt.name, h, tt.warns, tt.ok)
		}
	}
}

func TestSpan(t *testing.T) {
	for d, want := range map[time.Duration]string{
		7 * 24 * time.Hour:              "7d",
		36 * time.Hour:                  "1d 12h",
		90 * time.Minute:                "1h 30m",
		time.Hour + 30*time.Second:      "1h",
		5*time.Minute + 30*time.Second:  "5m 30s",
		45 * time.Second:                "45s",
		1500 * time.Millisecond:         "2s",
		0:                               "0s",
		2*24*time.Hour + 59*time.Minute: "2d",
	} {
		if got := span(d); got != want {
			t.Errorf("span(%v) = %q, want %q", d, got, want)
		}
	}
}
