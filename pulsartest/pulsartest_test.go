// The tests are an external package, as a user's tests are: they see pulsartest's API alone,
// with the official Go client as the user's application would use it.
package pulsartest_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"

	"github.com/letterbox-dev/letterbox/pulsartest"
)

// officialClient is an official Go client of b, closed when the test ends.
func officialClient(t *testing.T, opts pulsar.ClientOptions) pulsar.Client {
	t.Helper()
	opts.Logger = plog.DefaultNopLogger()
	if opts.OperationTimeout == 0 {
		opts.OperationTimeout = 10 * time.Second
	}
	if opts.ConnectionTimeout == 0 {
		opts.ConnectionTimeout = 5 * time.Second
	}
	cl, err := pulsar.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestDeadLettersSurviveRestart is a user's test of a consumer that gives up on some
// messages: the official client's DLQ policy sends them to the dead-letter topic with an
// initial subscription, and they are still there after the broker restarts on its directory.
func TestDeadLettersSurviveRestart(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t, pulsartest.Dir(t.TempDir()))
	ctx := timeout(t, time.Minute)
	cl := officialClient(t, pulsar.ClientOptions{URL: b.ServiceURL()})

	const topic, dlq = "persistent://public/default/orders", "persistent://public/default/orders-billing-DLQ"
	cons, err := cl.Subscribe(pulsar.ConsumerOptions{
		Topic: topic, SubscriptionName: "billing", Type: pulsar.Shared,
		NackRedeliveryDelay: 20 * time.Millisecond,
		DLQ:                 &pulsar.DLQPolicy{MaxDeliveries: 2, DeadLetterTopic: dlq, InitialSubscriptionName: "billing-audit"},
	})
	if err != nil {
		t.Fatal(err)
	}
	prod, err := cl.CreateProducer(pulsar.ProducerOptions{Topic: topic})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"order-1", "bad-2", "order-3", "bad-4", "order-5"} {
		if _, err := prod.Send(ctx, &pulsar.ProducerMessage{Key: key, Payload: []byte("payload of " + key)}); err != nil {
			t.Fatal(err)
		}
	}
	prod.Close()

	// The application, until the letters are in the DLQ: orders are handled, "bad" ones fail
	// every time.
	appCtx, stopApp := context.WithCancel(ctx)
	handled := make(chan string, 3)
	appDone := make(chan error, 1)
	go func() {
		for {
			m, err := cons.Receive(appCtx)
			if err != nil {
				appDone <- err
				return
			}
			if strings.HasPrefix(m.Key(), "bad") {
				cons.Nack(m)
				continue
			}
			cons.Ack(m)
			handled <- m.Key()
		}
	}()
	letters, err := b.WaitForMessages(ctx, dlq, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WaitForBacklog(ctx, topic, "billing", 0); err != nil {
		t.Fatal(err)
	}
	stopApp()
	if err := <-appDone; !errors.Is(err, context.Canceled) {
		t.Errorf("the application stopped on %v", err)
	}
	if len(handled) != 3 {
		t.Errorf("handled %d orders, want 3", len(handled))
	}
	var keys []string
	for _, l := range letters {
		keys = append(keys, l.Key)
		if l.Properties["REAL_TOPIC"] != topic {
			t.Errorf("letter %s: REAL_TOPIC %q, want %q", l.Key, l.Properties["REAL_TOPIC"], topic)
		}
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"bad-2", "bad-4"}) {
		t.Errorf("dead letters %q, want bad-2 and bad-4", keys)
	}
	cons.Close()
	// The letters wait in the initial subscription; the batch the DLQ producer may have made of
	// them is one entry of its backlog.
	if err := b.WaitForBacklog(ctx, dlq, "billing-audit", int64(len(entries(letters)))); err != nil {
		t.Fatal(err)
	}

	serviceURL := b.ServiceURL()
	if err := b.Restart(); err != nil {
		t.Fatal(err)
	}
	if b.ServiceURL() != serviceURL {
		t.Errorf("after the restart the broker is at %s, before it was at %s", b.ServiceURL(), serviceURL)
	}
	again, err := b.Messages(ctx, dlq)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(again) != fmt.Sprint(letters) {
		t.Errorf("after the restart the DLQ holds\n%v\nbefore it held\n%v", again, letters)
	}
	// The initial subscription still holds them for whoever triages.
	audit, err := officialClient(t, pulsar.ClientOptions{URL: b.ServiceURL()}).Subscribe(pulsar.ConsumerOptions{
		Topic: dlq, SubscriptionName: "billing-audit", Type: pulsar.Shared})
	if err != nil {
		t.Fatal(err)
	}
	defer audit.Close()
	for _, want := range letters {
		m, err := audit.Receive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Key() != want.Key || string(m.Payload()) != string(want.Payload) {
			t.Errorf("after the restart the audit subscription gave %s %q, want %s %q", m.Key(), m.Payload(), want.Key, want.Payload)
		}
		audit.Ack(m)
	}
}

// entries are the distinct entries messages are in: a batch is one.
func entries(msgs []pulsartest.Message) map[[2]int64]bool {
	out := map[[2]int64]bool{}
	for _, m := range msgs {
		out[[2]int64{m.Ledger, m.Entry}] = true
	}
	return out
}

func TestConf(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t, pulsartest.Conf("allowAutoTopicCreation", "false"))
	cl := officialClient(t, pulsar.ClientOptions{URL: b.ServiceURL()})
	if _, err := cl.CreateProducer(pulsar.ProducerOptions{Topic: "no-such-topic", SendTimeout: time.Second}); err == nil {
		t.Error("a producer created a topic with allowAutoTopicCreation=false")
	}

	conf := filepath.Join(t.TempDir(), "broker.conf")
	if err := os.WriteFile(conf, []byte("# a test's broker.conf\ndefaultNumPartitions=3\nallowAutoTopicCreationType=partitioned\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b = pulsartest.Start(t, pulsartest.ConfFile(conf))
	cl = officialClient(t, pulsar.ClientOptions{URL: b.ServiceURL()})
	parts, err := cl.TopicPartitions("orders")
	if err != nil || len(parts) != 3 {
		t.Errorf("with defaultNumPartitions=3, partitioned: %q, %v", parts, err)
	}

	for _, opt := range []pulsartest.Option{
		pulsartest.Conf("noSuchKey", "1"),
		pulsartest.Conf("maxMessageSize", "big"),
		pulsartest.Conf("a=b", "c"),
		pulsartest.ConfFile(filepath.Join(t.TempDir(), "missing.conf")),
		pulsartest.Namespace("no-slash"),
		pulsartest.Dir(""),
	} {
		if b, err := pulsartest.New(opt, pulsartest.Logger(slog.New(slog.DiscardHandler))); err == nil {
			b.Close()
			t.Errorf("New with a bad option started")
		} else if !strings.HasPrefix(err.Error(), "pulsartest: ") {
			t.Errorf("error %q does not say where it comes from", err)
		}
	}
}

func TestTenantsAndNamespaces(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := pulsartest.Start(t, pulsartest.Dir(dir), pulsartest.Tenant("acme"), pulsartest.Namespace("acme/orders"),
		pulsartest.Namespace("other/ns"))
	ctx := timeout(t, 30*time.Second)
	for tenant, want := range map[string][]string{"acme": {"acme/orders"}, "other": {"other/ns"}} {
		got, err := b.Admin().Namespaces(ctx, tenant)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("namespaces of %s: %q, %v; want %q", tenant, got, err, want)
		}
	}
	cl := officialClient(t, pulsar.ClientOptions{URL: b.ServiceURL()})
	prod, err := cl.CreateProducer(pulsar.ProducerOptions{Topic: "persistent://acme/orders/new"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prod.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	prod.Close()
	// Started again on the directory, the broker finds them and creates nothing twice.
	if err := b.Restart(); err != nil {
		t.Fatal(err)
	}
	if msgs, err := b.Messages(ctx, "persistent://acme/orders/new"); err != nil || len(msgs) != 1 {
		t.Errorf("after the restart: %v, %v", msgs, err)
	}
}

func TestRestartNeedsDir(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t)
	if err := b.Restart(); err == nil {
		t.Error("an in-memory broker restarted")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if _, err := b.Messages(context.Background(), "orders"); err == nil {
		t.Error("Messages of a closed broker")
	}
}

func TestMessages(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t, pulsartest.Conf("allowAutoTopicCreationType", "partitioned"), pulsartest.Conf("defaultNumPartitions", "2"))
	ctx := timeout(t, 30*time.Second)
	if _, err := b.Messages(ctx, "missing"); !errors.Is(err, pulsartest.ErrNoTopic) {
		t.Errorf("Messages of a topic that does not exist: %v", err)
	}
	if _, err := b.Admin().Topics(ctx, "public/default", true); err != nil {
		t.Fatal(err)
	}
	cl := officialClient(t, pulsar.ClientOptions{URL: b.ServiceURL()})
	prod, err := cl.CreateProducer(pulsar.ProducerOptions{Topic: "events", DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := prod.Send(ctx, &pulsar.ProducerMessage{Key: fmt.Sprint(i), Payload: []byte{byte(i)},
			Properties: map[string]string{"i": fmt.Sprint(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	prod.Close()
	msgs, err := b.Messages(ctx, "events")
	if err != nil || len(msgs) != 10 {
		t.Fatalf("Messages: %d, %v", len(msgs), err)
	}
	seen := map[string]bool{}
	for _, m := range msgs {
		if m.Properties["i"] != m.Key || len(m.Payload) != 1 || fmt.Sprint(m.Payload[0]) != m.Key || m.BatchIndex != -1 ||
			!strings.HasPrefix(m.Topic, "persistent://public/default/events-partition-") || m.PublishTime.IsZero() {
			t.Errorf("message %+v", m)
		}
		seen[m.Key] = true
	}
	if len(seen) != 10 {
		t.Errorf("keys read: %v", seen)
	}
	// A reader reads without consuming, and leaves no subscription behind.
	if st, err := b.Admin().PartitionedStats(ctx, "events", false); err != nil || len(st.Subscriptions) != 0 {
		t.Errorf("after Messages: subscriptions %v, %v", st.Subscriptions, err)
	}
	// Long enough for a first reading on a loaded machine: it dials and reads both partitions.
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := b.WaitForMessages(short, "events", 11); err == nil || !strings.Contains(err.Error(), "10 messages") {
		t.Errorf("WaitForMessages for more than there are: %v", err)
	}
	short, cancel = context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := b.WaitForBacklog(short, "events", "nobody", 0); err == nil || !strings.Contains(err.Error(), "no subscription nobody") {
		t.Errorf("WaitForBacklog of a subscription that does not exist: %v", err)
	}
}

func TestTokenAuth(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t, pulsartest.TokenAuth())
	ctx := timeout(t, 30*time.Second)
	producer := func(token string) error {
		// A refusal may be retried until the operation times out: short, as the broker is local.
		opts := pulsar.ClientOptions{URL: b.ServiceURL(), OperationTimeout: 2 * time.Second}
		if token != "" {
			opts.Authentication = pulsar.NewAuthenticationToken(token)
		}
		p, err := officialClient(t, opts).CreateProducer(pulsar.ProducerOptions{Topic: "orders", SendTimeout: time.Second})
		if err == nil {
			p.Close()
		}
		return err
	}
	if err := producer(""); err == nil {
		t.Error("a client without a token produced")
	}
	app, err := b.Token("orders-app")
	if err != nil {
		t.Fatal(err)
	}
	if err := producer(app); err == nil {
		t.Error("a role without permission produced")
	}
	if err := b.Admin().GrantNamespacePermission(ctx, "public/default", "orders-app", []string{"produce"}); err != nil {
		t.Fatal(err)
	}
	if err := producer(app); err != nil {
		t.Errorf("a role granted produce: %v", err)
	}
	super, err := b.Token(pulsartest.SuperUser)
	if err != nil {
		t.Fatal(err)
	}
	if err := producer(super); err != nil {
		t.Errorf("the superuser: %v", err)
	}
	if _, err := b.Token(""); err == nil {
		t.Error("a token without a role")
	}
	if _, _, err := b.ClientCert("x"); err == nil {
		t.Error("a client certificate without TLSAuth")
	}
}

func TestTLS(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t, pulsartest.TLS())
	if !strings.HasPrefix(b.ServiceURL(), "pulsar+ssl://127.0.0.1:") || !strings.HasPrefix(b.AdminURL(), "https://127.0.0.1:") {
		t.Errorf("with TLS: %s, %s", b.ServiceURL(), b.AdminURL())
	}
	ctx := timeout(t, 30*time.Second)
	cl := officialClient(t, pulsar.ClientOptions{URL: b.ServiceURL(), TLSTrustCertsFilePath: b.CAFile()})
	prod, err := cl.CreateProducer(pulsar.ProducerOptions{Topic: "secrets"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prod.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("s")}); err != nil {
		t.Fatal(err)
	}
	prod.Close()
	if msgs, err := b.Messages(ctx, "secrets"); err != nil || len(msgs) != 1 {
		t.Errorf("Messages over TLS: %v, %v", msgs, err)
	}
	untrusting := officialClient(t, pulsar.ClientOptions{URL: b.ServiceURL(), ConnectionTimeout: time.Second, OperationTimeout: time.Second})
	if _, err := untrusting.CreateProducer(pulsar.ProducerOptions{Topic: "secrets"}); err == nil {
		t.Error("a client that does not trust the CA connected")
	}
}

func TestTLSAuth(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t, pulsartest.TLSAuth())
	ctx := timeout(t, 30*time.Second)
	if err := b.Admin().GrantNamespacePermission(ctx, "public/default", "reader-app", []string{"consume"}); err != nil {
		t.Fatal(err)
	}
	consume := func(role string) error {
		// A refusal may be retried until the operation times out: short, as the broker is local.
		opts := pulsar.ClientOptions{URL: b.ServiceURL(), TLSTrustCertsFilePath: b.CAFile(), OperationTimeout: 2 * time.Second}
		if role != "" {
			cert, key, err := b.ClientCert(role)
			if err != nil {
				t.Fatal(err)
			}
			opts.Authentication = pulsar.NewAuthenticationTLS(cert, key)
		}
		c, err := officialClient(t, opts).Subscribe(pulsar.ConsumerOptions{Topic: "orders", SubscriptionName: "s"})
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := consume("reader-app"); err != nil {
		t.Errorf("a role granted consume, by its certificate: %v", err)
	}
	if err := consume("stranger"); err == nil {
		t.Error("a role without permission consumed")
	}
	if err := consume(""); err == nil {
		t.Error("a client without a certificate consumed")
	}
}

// The package comment's advice holds: with an unlimited retention, what was published before
// anyone subscribed is all there, beyond the ledgers the broker would otherwise free (without
// it, 8 of these 200 messages are left).
func TestRetentionKeepsWhatNoSubscriptionHolds(t *testing.T) {
	t.Parallel()
	b := pulsartest.Start(t, pulsartest.Conf("defaultRetentionTimeInMinutes", "-1"), pulsartest.Conf("defaultRetentionSizeInMB", "-1"))
	ctx := timeout(t, 30*time.Second)
	prod, err := officialClient(t, pulsar.ClientOptions{URL: b.ServiceURL()}).CreateProducer(pulsar.ProducerOptions{Topic: "kept", DisableBatching: true})
	if err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 64<<10) // 200 of them fill several of the broker's 4 MiB ledgers
	for i := range 200 {
		if _, err := prod.Send(ctx, &pulsar.ProducerMessage{Key: fmt.Sprint(i), Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
	prod.Close()
	msgs, err := b.Messages(ctx, "kept")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 200 {
		t.Fatalf("kept %d messages of 200", len(msgs))
	}
	if msgs[0].Key != "0" {
		t.Errorf("the first message kept has key %q, want 0", msgs[0].Key)
	}
}
