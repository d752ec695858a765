package broker

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func writeConf(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "broker.conf")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadConfAllKeys(t *testing.T) {
	t.Parallel()
	path := writeConf(t, `
# A broker.conf in upstream's syntax.
! also a comment

brokerServicePort=6651
  advertisedAddress = broker.local
clusterName=dev-cluster
allowAutoTopicCreation=false
allowAutoTopicCreationType=partitioned
defaultNumPartitions=4
allowAutoSubscriptionCreation=FALSE
maxMessageSize=1048576
delayedDeliveryEnabled=false
delayedDeliveryTickTimeMillis=250
keepAliveIntervalSeconds=10
acknowledgmentAtBatchIndexLevelEnabled=false
maxUnackedMessagesPerConsumer=0
ttlDurationDefaultInSeconds=604800
messageExpiryCheckIntervalInMinutes=1
`)
	base := DefaultConfig()
	base.ListenAddr = "127.0.0.1:6650"
	base.Logger = slog.New(slog.DiscardHandler)
	got, err := LoadConf(path, base)
	if err != nil {
		t.Fatal(err)
	}
	want := base
	want.ListenAddr = "127.0.0.1:6651"
	want.AdvertisedAddr = "broker.local"
	want.ClusterName = "dev-cluster"
	want.AllowAutoTopicCreation = false
	want.AllowAutoTopicCreationType = "partitioned"
	want.DefaultNumPartitions = 4
	want.AllowAutoSubscriptionCreation = false
	want.MaxMessageSize = 1 << 20
	want.DelayedDeliveryEnabled = false
	want.DelayedDeliveryTick = 250 * time.Millisecond
	want.KeepAliveInterval = 10 * time.Second
	want.AcknowledgmentAtBatchIndexLevelEnabled = false
	want.MaxUnackedMessagesPerConsumer = 0
	want.TTLDurationDefault = 7 * 24 * time.Hour
	want.MessageExpiryCheckInterval = time.Minute
	if !reflect.DeepEqual(got, want) {
		t.Errorf("LoadConf:\n got %+v\nwant %+v", got, want)
	}
}

func TestParseConf(t *testing.T) {
	t.Parallel()
	base := DefaultConfig()
	base.ListenAddr = "0.0.0.0:6650"
	tests := []struct {
		name    string
		text    string
		check   func(t *testing.T, c Config)
		ignored []string
	}{
		{
			name: "empty file keeps base",
			text: "",
			check: func(t *testing.T, c Config) {
				if !reflect.DeepEqual(c, base) {
					t.Errorf("got %+v, want base", c)
				}
			},
		},
		{
			name: "empty values keep base",
			text: "clusterName=\nmaxMessageSize=   \nbrokerServicePort=\n",
			check: func(t *testing.T, c Config) {
				if !reflect.DeepEqual(c, base) {
					t.Errorf("got %+v, want base", c)
				}
			},
		},
		{
			name: "last value wins, CRLF and BOM tolerated",
			text: "\ufeffclusterName=a\r\nclusterName=b\r\n",
			check: func(t *testing.T, c Config) {
				if c.ClusterName != "b" {
					t.Errorf("ClusterName = %q, want b", c.ClusterName)
				}
			},
		},
		{
			name: "value may contain =",
			text: "clusterName=a=b\n",
			check: func(t *testing.T, c Config) {
				if c.ClusterName != "a=b" {
					t.Errorf("ClusterName = %q, want a=b", c.ClusterName)
				}
			},
		},
		{
			name: "brokerServicePort keeps the host",
			text: "brokerServicePort=7000\n",
			check: func(t *testing.T, c Config) {
				if c.ListenAddr != "0.0.0.0:7000" {
					t.Errorf("ListenAddr = %q", c.ListenAddr)
				}
			},
		},
		{
			name: "advertisedAddress is a bare host, whatever brokerServicePort",
			text: "advertisedAddress=10.0.0.5\nbrokerServicePort=7001\n",
			check: func(t *testing.T, c Config) {
				if c.AdvertisedAddr != "10.0.0.5" || c.ListenAddr != "0.0.0.0:7001" {
					t.Errorf("AdvertisedAddr = %q", c.AdvertisedAddr)
				}
			},
		},
		{
			name: "advertisedAddress without brokerServicePort is a bare host too",
			text: "advertisedAddress=::1\n",
			check: func(t *testing.T, c Config) {
				if c.AdvertisedAddr != "::1" {
					t.Errorf("AdvertisedAddr = %q", c.AdvertisedAddr)
				}
			},
		},
		{
			name: "advertisedAddress with a port is used as is",
			text: "advertisedAddress=proxy:16650\nbrokerServicePort=0\n",
			check: func(t *testing.T, c Config) {
				if c.AdvertisedAddr != "proxy:16650" || c.ListenAddr != "0.0.0.0:0" {
					t.Errorf("AdvertisedAddr = %q, ListenAddr = %q", c.AdvertisedAddr, c.ListenAddr)
				}
			},
		},
		{
			name: "unknown keys are reported once each, in order",
			text: "zookeeperServers=\nwebSocketServiceEnabled=true\nclusterName=x\nzookeeperServers=localhost\n",
			check: func(t *testing.T, c Config) {
				if c.ClusterName != "x" {
					t.Errorf("ClusterName = %q", c.ClusterName)
				}
			},
			ignored: []string{"zookeeperServers", "webSocketServiceEnabled"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ignored, err := parseConf(strings.NewReader(tt.text), "test.conf", base)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, got)
			if !reflect.DeepEqual(ignored, tt.ignored) {
				t.Errorf("ignored = %q, want %q", ignored, tt.ignored)
			}
		})
	}
}

func TestParseConfErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want string // substring of the error
	}{
		{"# ok\nbrokerServicePort\n", "test.conf:2: want key=value"},
		{"=5\n", "test.conf:1: want key=value"},
		{"\n\nbrokerServicePort=66000\n", "test.conf:3: brokerServicePort:"},
		{"brokerServicePort=-1\n", "test.conf:1: brokerServicePort:"},
		{"advertisedAddress=pulsar://h\n", "test.conf:1: advertisedAddress:"},
		{"allowAutoTopicCreation=yes\n", "test.conf:1: allowAutoTopicCreation:"},
		{"allowAutoTopicCreationType=sharded\n", "test.conf:1: allowAutoTopicCreationType:"},
		{"defaultNumPartitions=0\n", "test.conf:1: defaultNumPartitions: 0: must be at least 1"},
		{"allowAutoSubscriptionCreation=1\n", "test.conf:1: allowAutoSubscriptionCreation:"},
		{"maxMessageSize=5MB\n", "test.conf:1: maxMessageSize:"},
		{"delayedDeliveryEnabled=on\n", "test.conf:1: delayedDeliveryEnabled:"},
		{"delayedDeliveryTickTimeMillis=0\n", "test.conf:1: delayedDeliveryTickTimeMillis: 0: must be positive"},
		{"keepAliveIntervalSeconds=30 # seconds\n", "test.conf:1: keepAliveIntervalSeconds:"},
		{"keepAliveIntervalSeconds=99999999999\n", "test.conf:1: keepAliveIntervalSeconds:"},
		{"acknowledgmentAtBatchIndexLevelEnabled=ture\n", "test.conf:1: acknowledgmentAtBatchIndexLevelEnabled:"},
		{"maxUnackedMessagesPerConsumer=-5\n", "test.conf:1: maxUnackedMessagesPerConsumer:"},
		{"ttlDurationDefaultInSeconds=-1\n", "test.conf:1: ttlDurationDefaultInSeconds: -1: must be from 0 to 2147483647"},
		{"ttlDurationDefaultInSeconds=1d\n", "test.conf:1: ttlDurationDefaultInSeconds:"},
		{"messageExpiryCheckIntervalInMinutes=0\n", "test.conf:1: messageExpiryCheckIntervalInMinutes: 0: must be positive"},
		{"clusterName=a\nclusterName=" + strings.Repeat("x", 2<<20) + "\n", "test.conf:2: bufio.Scanner: token too long"},
	}
	for _, tt := range tests {
		base := DefaultConfig()
		base.ListenAddr = "127.0.0.1:6650"
		_, _, err := parseConf(strings.NewReader(tt.text), "test.conf", base)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseConf(%.60q) error = %v, want it to contain %q", tt.text, err, tt.want)
		}
	}
}

func TestLoadConfLogsIgnoredKeys(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	base := DefaultConfig()
	base.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	path := writeConf(t, "managedLedgerDefaultEnsembleSize=1\nclusterName=c\n")
	cfg, err := LoadConf(path, base)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ClusterName != "c" {
		t.Errorf("ClusterName = %q", cfg.ClusterName)
	}
	if out := logs.String(); strings.Count(out, "\n") != 1 || !strings.Contains(out, "managedLedgerDefaultEnsembleSize") {
		t.Errorf("want one warning naming the ignored key, got %q", out)
	}
}

func TestLoadConfMissingFile(t *testing.T) {
	t.Parallel()
	_, err := LoadConf(filepath.Join(t.TempDir(), "nope.conf"), DefaultConfig())
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v, want fs.ErrNotExist", err)
	}
}
