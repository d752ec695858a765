package broker

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

// The dispatch keys of broker.conf, under upstream's names; a failover delay of 0 is allowed,
// as upstream (no delay).
func TestLoadConfDispatchKeys(t *testing.T) {
	t.Parallel()
	base := DefaultConfig()
	base.Logger = slog.New(slog.DiscardHandler)
	if base.ActiveConsumerFailoverDelay != time.Second {
		t.Fatalf("default failover delay %v, want upstream's 1s", base.ActiveConsumerFailoverDelay)
	}
	for _, tc := range []struct {
		conf string
		want time.Duration
	}{
		{"activeConsumerFailoverDelayTimeMillis=250\n", 250 * time.Millisecond},
		{"activeConsumerFailoverDelayTimeMillis=0\n", 0},
	} {
		got, err := LoadConf(writeConf(t, tc.conf), base)
		if err != nil {
			t.Fatalf("%q: %v", tc.conf, err)
		}
		if got.ActiveConsumerFailoverDelay != tc.want {
			t.Errorf("%q: failover delay %v, want %v", tc.conf, got.ActiveConsumerFailoverDelay, tc.want)
		}
	}
	for _, bad := range []string{"activeConsumerFailoverDelayTimeMillis=-1\n", "activeConsumerFailoverDelayTimeMillis=soon\n"} {
		if _, err := LoadConf(writeConf(t, bad), base); err == nil || !strings.Contains(err.Error(), "activeConsumerFailoverDelayTimeMillis") {
			t.Errorf("%q: %v, want an error naming the key", bad, err)
		}
	}
}

// The Key_Shared keys: consistent hashing by default, as upstream; auto-split when false.
func TestLoadConfKeySharedKeys(t *testing.T) {
	t.Parallel()
	base := DefaultConfig()
	base.Logger = slog.New(slog.DiscardHandler)
	if !base.SubscriptionKeySharedUseConsistentHashing || base.SubscriptionKeySharedConsistentHashingReplicaPoints != 100 {
		t.Fatalf("defaults %v/%d, want upstream's true/100", base.SubscriptionKeySharedUseConsistentHashing, base.SubscriptionKeySharedConsistentHashingReplicaPoints)
	}
	got, err := LoadConf(writeConf(t, "subscriptionKeySharedUseConsistentHashing=false\nsubscriptionKeySharedConsistentHashingReplicaPoints=20\n"), base)
	if err != nil {
		t.Fatal(err)
	}
	if got.SubscriptionKeySharedUseConsistentHashing || got.SubscriptionKeySharedConsistentHashingReplicaPoints != 20 {
		t.Fatalf("loaded %v/%d, want false/20", got.SubscriptionKeySharedUseConsistentHashing, got.SubscriptionKeySharedConsistentHashingReplicaPoints)
	}
	if _, err := LoadConf(writeConf(t, "subscriptionKeySharedConsistentHashingReplicaPoints=0\n"), base); err == nil {
		t.Fatal("0 ring points accepted")
	}
}

// activeConsumerFailoverConsistentHashing is read (off by default, as upstream).
func TestLoadConfFailoverConsistentHashing(t *testing.T) {
	t.Parallel()
	base := DefaultConfig()
	base.Logger = slog.New(slog.DiscardHandler)
	got, err := LoadConf(writeConf(t, "activeConsumerFailoverConsistentHashing=true\n"), base)
	if err != nil {
		t.Fatal(err)
	}
	if base.ActiveConsumerFailoverConsistentHashing || !got.ActiveConsumerFailoverConsistentHashing {
		t.Fatalf("default %v, loaded %v; want false, true", base.ActiveConsumerFailoverConsistentHashing, got.ActiveConsumerFailoverConsistentHashing)
	}
}
