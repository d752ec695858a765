package client

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

func startInternalBroker(t *testing.T) *broker.Broker {
	t.Helper()
	b, err := broker.New(broker.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestRequestTimeoutRemovesPending: a request whose answer never comes times out with
// ErrTimeout (and context.DeadlineExceeded) and leaves no pending entry behind; a cancelled
// one likewise.
func TestRequestTimeoutRemovesPending(t *testing.T) {
	b := startInternalBroker(t)
	cl, err := New(Options{ServiceURL: b.ServiceURL(), Logger: slog.New(slog.DiscardHandler), OperationTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := cl.serviceConn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		return broker.Verdict{Drop: cmd.GetType() == pb.BaseCommand_PARTITIONED_METADATA}
	})
	req := func() *pb.BaseCommand {
		return &pb.BaseCommand{Type: pb.BaseCommand_PARTITIONED_METADATA.Enum(),
			PartitionMetadata: &pb.CommandPartitionedTopicMetadata{Topic: proto.String("persistent://public/default/x")}}
	}
	_, err = c.request(context.Background(), req()) // the operation timeout applies
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("request: %v", err)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, ccancel)
	if _, err = c.request(cctx, req()); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled request: %v", err)
	}
	c.mu.Lock()
	n := len(c.pending)
	c.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d pending entries left", n)
	}
}

// TestConnectAnnouncesVersionAndToken: CONNECT carries protocol v21, our client version,
// feature flags and the token (read from the token file on every connect).
func TestConnectAnnouncesVersionAndToken(t *testing.T) {
	b := startInternalBroker(t)
	var got atomic.Pointer[pb.CommandConnect]
	b.Intercept(func(dir broker.Direction, cmd *pb.BaseCommand) broker.Verdict {
		if cmd.GetConnect() != nil {
			got.Store(cmd.GetConnect())
		}
		return broker.Verdict{}
	})
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("jwt-token\n"), 0o600)
	cl, err := New(Options{ServiceURL: b.ServiceURL(), Logger: slog.New(slog.DiscardHandler), TokenFile: tokenFile})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cl.TopicPartitions(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	cc := got.Load()
	if cc == nil {
		t.Fatal("no CONNECT seen")
	}
	if cc.GetProtocolVersion() != 21 || cc.GetClientVersion() != "letterbox-"+Version ||
		cc.GetAuthMethodName() != "token" || string(cc.GetAuthData()) != "jwt-token" ||
		!cc.GetFeatureFlags().GetSupportsAuthRefresh() {
		t.Fatalf("CONNECT %v", cc)
	}
}

func TestParseTopic(t *testing.T) {
	for in, want := range map[string]string{
		"x":                                   "persistent://public/default/x",
		"t/ns/x":                              "persistent://t/ns/x",
		"non-persistent://t/ns/x-partition-2": "non-persistent://t/ns/x-partition-2",
	} {
		tn, err := parseTopic(in)
		if err != nil || tn.String() != want {
			t.Errorf("parseTopic(%q) = %v, %v; want %s", in, tn, err, want)
		}
	}
	tn, _ := parseTopic("x-partition-3")
	if tn.Partition != 3 || tn.Base().String() != "persistent://public/default/x" {
		t.Errorf("partition: %+v base %s", tn, tn.Base())
	}
	// A -partition- suffix that is no index (upstream's rule) names a topic of its own.
	if tn, err := parseTopic("a-partition-b"); err != nil || tn.Partition != -1 || tn.Base().String() != "persistent://public/default/a-partition-b" {
		t.Errorf("parseTopic(a-partition-b) = %+v, %v; want a topic of its own", tn, err)
	}
	// As upstream's TopicName (and client/naming): a short name has one or three segments, and a
	// tenant or namespace name only [-=:.\w].
	for _, bad := range []string{"", "a/b", "ftp://a/b/c", "t/c/ns/x", "bad tenant/ns/x", "persistent://t/n s/x"} {
		if _, err := parseTopic(bad); !errors.Is(err, ErrInvalidTopic) {
			t.Errorf("parseTopic(%q): %v", bad, err)
		}
	}
}

func TestCompressionRoundTrip(t *testing.T) {
	var z codecs
	defer z.close()
	inputs := [][]byte{{}, []byte("x"), []byte("hello hello hello hello hello hello"), make([]byte, 100000)}
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range inputs[3] {
		inputs[3][i] = byte(rnd.Uint32()) // incompressible: LZ4 falls back to literals
	}
	for _, c := range []Compression{NoCompression, LZ4, ZLIB, ZSTD, SNAPPY} {
		for _, in := range inputs {
			out, err := z.compress(c, nil, in)
			if err != nil {
				t.Fatalf("%v compress: %v", c, err)
			}
			back, err := z.decompress(pb.CompressionType(c), out, len(in))
			if err != nil || string(back) != string(in) {
				t.Fatalf("%v round trip of %d bytes: %v", c, len(in), err)
			}
		}
	}
}

func TestServerErrorIs(t *testing.T) {
	err := error(&ServerError{Code: pb.ServerError_TopicNotFound, Message: "gone"})
	if !errors.Is(err, ErrTopicNotFound) || errors.Is(err, ErrConsumerBusy) {
		t.Fatal("errors.Is on ServerError")
	}
	var se *ServerError
	if !errors.As(err, &se) || se.Message != "gone" {
		t.Fatal("errors.As on ServerError")
	}
	if !errors.Is(&BrokerClosedError{Reason: "r"}, ErrClosed) {
		t.Fatal("BrokerClosedError is not ErrClosed")
	}
}

// TestPatternTopic checks that a topics pattern is read by client/naming's rules: short forms
// expanded, the namespace of a V1 name with its cluster, and no unknown domain or invalid
// tenant (the pattern's own split took any domain and read tenant/cluster as the namespace).
func TestPatternTopic(t *testing.T) {
	for _, c := range []struct{ in, full, domain, ns string }{
		{"orders-.*", "persistent://public/default/orders-.*", "persistent", "public/default"},
		{"t/ns/o.*", "persistent://t/ns/o.*", "persistent", "t/ns"},
		{"non-persistent://t/ns/o.*", "non-persistent://t/ns/o.*", "non-persistent", "t/ns"},
		{"persistent://t/c/ns/o.*", "persistent://t/c/ns/o.*", "persistent", "t/c/ns"},
	} {
		full, domain, ns, err := patternTopic(c.in)
		if err != nil || full != c.full || domain != c.domain || ns != c.ns {
			t.Errorf("patternTopic(%q) = %q %q %q %v, want %q %q %q", c.in, full, domain, ns, err, c.full, c.domain, c.ns)
		}
	}
	for _, bad := range []string{"a/b", "t/c/ns/o.*", "bad://t/ns/o.*", "bad tenant/ns/o.*"} {
		if _, _, _, err := patternTopic(bad); !errors.Is(err, ErrInvalidTopic) {
			t.Errorf("patternTopic(%q): %v, want ErrInvalidTopic", bad, err)
		}
	}
}
