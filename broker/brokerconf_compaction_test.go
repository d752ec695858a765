package broker

import (
	"testing"
	"time"
)

// brokerServiceCompactionMonitorIntervalInSeconds sets how often compaction thresholds are
// checked; a value that is not a positive number of seconds is refused.
func TestLoadConfCompactionMonitorInterval(t *testing.T) {
	cfg, err := LoadConf(writeConf(t, "brokerServiceCompactionMonitorIntervalInSeconds=7\n"), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.CompactionMonitorInterval != 7*time.Second {
		t.Errorf("interval %v, want 7s", cfg.CompactionMonitorInterval)
	}
	if DefaultConfig().CompactionMonitorInterval != 60*time.Second {
		t.Errorf("default interval %v, want upstream's 60s", DefaultConfig().CompactionMonitorInterval)
	}
	if _, err := LoadConf(writeConf(t, "brokerServiceCompactionMonitorIntervalInSeconds=0\n"), DefaultConfig()); err == nil {
		t.Error("an interval of 0 was accepted")
	}
}
