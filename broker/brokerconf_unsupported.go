package broker

import (
	"log/slog"
)

// Settings of broker.conf that letterbox reads only to say it does not support them: the broker
// starts without them (as upstream's own client-test standalone.conf turns transactions on, and
// a refusal would keep that file from being used), and says so once, at start.

func init() {
	confKeys["transactionCoordinatorEnabled"] = func(cfg *Config, _ *confState, v string) error {
		var on bool
		if err := boolKey(func(*Config) *bool { return &on })(cfg, nil, v); err != nil {
			return err
		}
		if on {
			logger(cfg).Warn("broker config: transactionCoordinatorEnabled=true is not supported: letterbox has no " +
				"transaction coordinator, so transactions stay off (clients that begin one are refused)")
		}
		return nil
	}
}

func logger(cfg *Config) *slog.Logger {
	if cfg.Logger != nil {
		return cfg.Logger
	}
	return slog.Default()
}
