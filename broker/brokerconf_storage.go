package broker

import (
	"math"
	"time"
)

func init() {
	for k, v := range storageConfKeys {
		confKeys[k] = v
	}
}

// storageConfKeys bound the segment files a durable store keeps open. Upstream's broker has no
// files of its own: its bookies keep the ledgers, and BookKeeper bounds a bookie's open ledger
// files with these two keys, which letterbox reads from broker.conf since its segment files
// are its bookie's. openFileLimit is how many are open at once (letterbox's default 256,
// BookKeeper's 20000); fileInfoMaxIdleTime, in seconds, closes a file unused that long (0:
// only to make room, as BookKeeper; letterbox's default is 60).
var storageConfKeys = map[string]confSetter{
	"openFileLimit": func(cfg *Config, _ *confState, v string) error {
		n, err := confInt(v, 1, math.MaxInt32)
		cfg.OpenFileLimit = int(n)
		return err
	},
	"fileInfoMaxIdleTime": func(cfg *Config, _ *confState, v string) error {
		n, err := confInt(v, 0, math.MaxInt32)
		cfg.FileInfoMaxIdle = time.Duration(n) * time.Second
		if n == 0 {
			cfg.FileInfoMaxIdle = -1 // never, as the store says it
		}
		return err
	},
}
