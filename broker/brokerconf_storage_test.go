package broker

import (
	"strings"
	"testing"
	"time"
)

// openFileLimit and fileInfoMaxIdleTime, BookKeeper's keys for a bookie's open ledger files,
// bound the durable store's open segment files; fileInfoMaxIdleTime=0 means never closed for
// being idle, as in BookKeeper.
func TestStorageConfKeys(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		text     string
		limit    int
		idle     time.Duration
		errorHas string
	}{
		{text: "openFileLimit=64\nfileInfoMaxIdleTime=30\n", limit: 64, idle: 30 * time.Second},
		{text: "fileInfoMaxIdleTime=0\n", idle: -1},
		{text: "openFileLimit=0\n", errorHas: "openFileLimit: 0: must be from 1"},
		{text: "fileInfoMaxIdleTime=-1\n", errorHas: "fileInfoMaxIdleTime: -1: must be from 0"},
	} {
		cfg, _, err := parseConf(strings.NewReader(tt.text), "test.conf", DefaultConfig())
		switch {
		case tt.errorHas != "":
			if err == nil || !strings.Contains(err.Error(), tt.errorHas) {
				t.Errorf("%q: error %v, want one containing %q", tt.text, err, tt.errorHas)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.text, err)
		case cfg.OpenFileLimit != tt.limit || cfg.FileInfoMaxIdle != tt.idle:
			t.Errorf("%q: limit %d, idle %v; want %d, %v", tt.text, cfg.OpenFileLimit, cfg.FileInfoMaxIdle, tt.limit, tt.idle)
		}
	}
}
