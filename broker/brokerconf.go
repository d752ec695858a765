package broker

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LoadConf reads a file in upstream's broker.conf syntax and applies it on top of base.
//
// The syntax is the subset of Java properties that broker.conf uses: one key=value per line,
// whitespace around key and value trimmed, blank lines and lines starting with # or ! ignored.
// A key given twice takes its last value. An empty value leaves the setting as in base, as an
// empty value means "use the default" upstream. There are no inline comments: as upstream,
// "key=1 # one" has the value "1 # one", which is then rejected as a bad value.
//
// The keys letterbox implements are listed in confKeys; every other key (upstream has hundreds)
// is ignored, and the ignored keys are logged once, as a warning, to base.Logger. A malformed
// line or a bad value is an error naming the file, the line and the key.
func LoadConf(path string, base Config) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return base, fmt.Errorf("broker: config: %w", err)
	}
	defer f.Close()
	cfg, ignored, err := parseConf(f, path, base)
	if err != nil {
		return base, err
	}
	if len(ignored) > 0 {
		log := base.Logger
		if log == nil {
			log = slog.Default()
		}
		log.Warn("broker config: ignoring keys letterbox does not implement",
			"file", path, "count", len(ignored), "keys", ignored)
	}
	return cfg, nil
}

// ParseConf applies the broker.conf text read from r (named name in errors) on top of base, as
// LoadConf does a file's, and returns the result and the keys letterbox does not implement
// (ignored), in the order they first appear, for the caller to report as it sees fit.
func ParseConf(r io.Reader, name string, base Config) (cfg Config, ignored []string, err error) {
	return parseConf(r, name, base)
}

// ConfKeys lists the broker.conf keys letterbox implements, sorted.
func ConfKeys() []string { return slices.Sorted(maps.Keys(confKeys)) }

// confSetter applies one non-empty value to cfg. Its error says what is wrong with the value;
// the caller adds the file, line and key.
type confSetter func(cfg *Config, st *confState, value string) error

// confState carries what depends on more than one key: upstream's advertisedAddress is a bare
// host, and a later host:port value must replace it.
type confState struct {
	advertisedHost string
}

// confKeys are the broker.conf keys letterbox implements, under upstream's names. The security
// keys (authentication, authorization, TLS) join them from brokerconf_auth.go.
var confKeys = map[string]confSetter{
	"brokerServicePort": func(cfg *Config, st *confState, v string) error {
		port, err := parsePort(v)
		if err != nil {
			return err
		}
		host, _, err := net.SplitHostPort(cfg.ListenAddr)
		if err != nil {
			return fmt.Errorf("cannot set the port of the listen address %q: %v", cfg.ListenAddr, err)
		}
		cfg.ListenAddr = net.JoinHostPort(host, port)
		return nil
	},
	// The admin listener's port; `letterbox broker` applies it unless --http is given.
	"webServicePort": func(cfg *Config, _ *confState, v string) error {
		port, err := parsePort(v)
		if err != nil {
			return err
		}
		cfg.WebServicePort = port
		return nil
	},
	"advertisedAddress": func(cfg *Config, st *confState, v string) error {
		if strings.ContainsAny(v, " \t/") {
			return fmt.Errorf("%q is not a host name or address", v)
		}
		// Upstream's value is a bare host. host:port is accepted too and used as is.
		if _, _, err := net.SplitHostPort(v); err == nil {
			cfg.AdvertisedAddr = v
			st.advertisedHost = ""
			return nil
		}
		st.advertisedHost = v
		return nil
	},
	"clusterName": func(cfg *Config, _ *confState, v string) error {
		cfg.ClusterName = v
		return nil
	},
	"allowAutoTopicCreation": boolKey(func(c *Config) *bool { return &c.AllowAutoTopicCreation }),
	"allowAutoTopicCreationType": func(cfg *Config, _ *confState, v string) error {
		switch t := strings.ToLower(v); t {
		case "non-partitioned", "partitioned":
			cfg.AllowAutoTopicCreationType = t
			return nil
		}
		return fmt.Errorf("%q: want non-partitioned or partitioned", v)
	},
	"defaultNumPartitions":                 intKey(1, func(c *Config) *int { return &c.DefaultNumPartitions }),
	"allowAutoSubscriptionCreation":        boolKey(func(c *Config) *bool { return &c.AllowAutoSubscriptionCreation }),
	"maxMessageSize":                       intKey(1, func(c *Config) *int { return &c.MaxMessageSize }),
	"delayedDeliveryEnabled":               boolKey(func(c *Config) *bool { return &c.DelayedDeliveryEnabled }),
	"delayedDeliveryTickTimeMillis":        durationKey(time.Millisecond, func(c *Config) *time.Duration { return &c.DelayedDeliveryTick }),
	"isDelayedDeliveryDeliverAtTimeStrict": boolKey(func(c *Config) *bool { return &c.DelayedDeliveryDeliverAtTimeStrict }),
	// Upstream disables keep-alive with 0; letterbox always keeps it, so 0 is refused rather
	// than silently replaced.
	"keepAliveIntervalSeconds":               durationKey(time.Second, func(c *Config) *time.Duration { return &c.KeepAliveInterval }),
	"acknowledgmentAtBatchIndexLevelEnabled": boolKey(func(c *Config) *bool { return &c.AcknowledgmentAtBatchIndexLevelEnabled }),
	"brokerDeduplicationEnabled":             boolKey(func(c *Config) *bool { return &c.BrokerDeduplicationEnabled }),
	// 0 means no limit, as upstream.
	"maxUnackedMessagesPerConsumer": intKey(0, func(c *Config) *int { return &c.MaxUnackedMessagesPerConsumer }),
	// Message TTL (ttl.go): 0, the default, means messages never expire.
	"ttlDurationDefaultInSeconds": func(cfg *Config, _ *confState, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
		if n < 0 || n > math.MaxInt32 { // upstream's is a Java int
			return fmt.Errorf("%d: must be from 0 to %d", n, math.MaxInt32)
		}
		cfg.TTLDurationDefault = time.Duration(n) * time.Second
		return nil
	},
	"messageExpiryCheckIntervalInMinutes": durationKey(time.Minute, func(c *Config) *time.Duration { return &c.MessageExpiryCheckInterval }),
}

// parseConf applies the broker.conf read from r (named name in errors) on top of base and
// returns the result and the keys it ignored, in the order they first appear.
func parseConf(r io.Reader, name string, base Config) (Config, []string, error) {
	cfg := base
	var st confState
	var ignored []string
	seen := make(map[string]bool)

	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if n == 1 {
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
		}
		text := strings.TrimSpace(string(line))
		if text == "" || text[0] == '#' || text[0] == '!' {
			continue
		}
		key, value, ok := strings.Cut(text, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !ok || key == "" {
			return base, nil, fmt.Errorf("broker: config %s:%d: want key=value, got %q", name, n, text)
		}
		set, known := confKeys[key]
		if !known {
			if !seen[key] {
				seen[key] = true
				ignored = append(ignored, key)
			}
			continue
		}
		if value == "" {
			continue
		}
		if err := set(&cfg, &st, value); err != nil {
			return base, nil, fmt.Errorf("broker: config %s:%d: %s: %w", name, n, key, err)
		}
	}
	if err := sc.Err(); err != nil {
		return base, nil, fmt.Errorf("broker: config %s:%d: %w", name, n+1, err)
	}

	if st.advertisedHost != "" {
		// A bare host, as upstream's: the broker advertises it with each listener's real
		// port, whatever port a flag or a later key gives the listener.
		cfg.AdvertisedAddr = st.advertisedHost
	}
	return cfg, ignored, nil
}

func parsePort(v string) (string, error) {
	p, err := strconv.ParseUint(v, 10, 16)
	if err != nil {
		return "", fmt.Errorf("%q is not a port number (0-65535)", v)
	}
	return strconv.FormatUint(p, 10), nil
}

func boolKey(field func(*Config) *bool) confSetter {
	return func(cfg *Config, _ *confState, v string) error {
		// Stricter than upstream, which reads anything but "true" as false: a typo such as
		// "ture" should not quietly turn a feature off.
		switch strings.ToLower(v) {
		case "true":
			*field(cfg) = true
		case "false":
			*field(cfg) = false
		default:
			return fmt.Errorf("%q: want true or false", v)
		}
		return nil
	}
}

func intKey(minimum int, field func(*Config) *int) confSetter {
	return func(cfg *Config, _ *confState, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
		if n < minimum {
			return fmt.Errorf("%d: must be at least %d", n, minimum)
		}
		*field(cfg) = n
		return nil
	}
}

func durationKey(unit time.Duration, field func(*Config) *time.Duration) confSetter {
	return func(cfg *Config, _ *confState, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
		if n < 1 {
			return fmt.Errorf("%d: must be positive", n)
		}
		if n > int64(24*time.Hour/unit) {
			return fmt.Errorf("%d: must be at most one day", n)
		}
		*field(cfg) = time.Duration(n) * unit
		return nil
	}
}
