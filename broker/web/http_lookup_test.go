package web_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	plog "github.com/apache/pulsar-client-go/pulsar/log"
	"github.com/letterbox-dev/letterbox/broker"
)

// httpClient is an official client whose service URL is the admin listener's http:// URL: it
// looks topics up and asks their partitioned metadata over HTTP, then speaks the binary
// protocol to the broker URL the lookup answers.
func (e *env) httpClient(t *testing.T) pulsar.Client {
	t.Helper()
	c, err := pulsar.NewClient(pulsar.ClientOptions{
		URL:              e.s.URL(),
		OperationTimeout: 10 * time.Second,
		Logger:           plog.NewLoggerWithSlog(quiet),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// A client with an http:// service URL produces to and consumes from topics that do not
// exist yet, as against upstream: the partitioned-metadata request with
// checkAllowAutoCreation=true answers {"partitions":0} and the producer or consumer creates
// the topic.
//
// Not parallel, nor the other test making an http:// client: the official client sets
// http.DefaultTransport's TLS settings when it makes its HTTP lookup, racing with pulsaradmin
// cloning that transport in parallel tests.
func TestHTTPServiceURLProduceConsume(t *testing.T) {
	e := newEnv(t)
	c := e.httpClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	const topic = "persistent://public/default/http-lookup"
	cons, err := c.Subscribe(pulsar.ConsumerOptions{Topic: topic, SubscriptionName: "s"})
	if err != nil {
		t.Fatalf("subscribe over an http:// service URL: %v", err)
	}
	defer cons.Close()
	prod, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic})
	if err != nil {
		t.Fatalf("producer over an http:// service URL: %v", err)
	}
	defer prod.Close()
	if _, err := prod.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("hello")}); err != nil {
		t.Fatal(err)
	}
	m, err := cons.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Payload()) != "hello" {
		t.Errorf("received %q", m.Payload())
	}

	// A producer to a topic nobody created, alone.
	p2, err := c.CreateProducer(pulsar.ProducerOptions{Topic: "public/default/http-lookup-2"})
	if err != nil {
		t.Fatalf("producer to a new topic: %v", err)
	}
	p2.Close()
}

// With auto-creation of partitioned topics, the first client's metadata request creates the
// partitioned topic with the default partition count, as upstream's does.
func TestHTTPPartitionedMetadataAutoCreation(t *testing.T) {
	e := newEnv(t, func(c *broker.Config) {
		c.AllowAutoTopicCreationType = "partitioned"
		c.DefaultNumPartitions = 3
	})
	get := func(path string) (int, map[string]any) {
		t.Helper()
		resp, body := do(t, "GET", e.s.URL()+path)
		var out map[string]any
		json.Unmarshal([]byte(body), &out)
		return resp.StatusCode, out
	}
	code, out := get("/admin/v2/persistent/public/default/auto-part/partitions?checkAllowAutoCreation=true")
	if code != 200 || out["partitions"] != float64(3) {
		t.Fatalf("metadata with checkAllowAutoCreation: %d %v, want 200 and 3 partitions", code, out)
	}
	code, out = get("/admin/v2/persistent/public/default/auto-part/partitions")
	if code != 200 || out["partitions"] != float64(3) {
		t.Errorf("the partitioned topic was not created: %d %v", code, out)
	}
	// Without checkAllowAutoCreation a missing topic is still not found.
	if code, out = get("/admin/v2/persistent/public/default/never/partitions"); code != 404 {
		t.Errorf("metadata of a missing topic: %d %v, want 404", code, out)
	}

	c := e.httpClient(t)
	prod, err := c.CreateProducer(pulsar.ProducerOptions{Topic: "public/default/auto-part-2"})
	if err != nil {
		t.Fatalf("producer: %v", err)
	}
	defer prod.Close()
	parts, err := c.TopicPartitions("public/default/auto-part-2")
	if err != nil || len(parts) != 3 {
		t.Errorf("partitions = %v, %v; want 3", parts, err)
	}
}

// With auto-creation off, a missing topic is not found (404), as upstream answers.
func TestHTTPPartitionedMetadataNoAutoCreation(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *broker.Config) { c.AllowAutoTopicCreation = false })
	resp, body := do(t, "GET", e.s.URL()+"/admin/v2/persistent/public/default/nope/partitions?checkAllowAutoCreation=true")
	if resp.StatusCode != 404 {
		t.Errorf("metadata of a missing topic, auto-creation off: %d %s, want 404", resp.StatusCode, body)
	}
}

// The HTTP lookup answers upstream's LookupData fields.
func TestHTTPLookupFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	resp, body := do(t, "GET", e.s.URL()+"/lookup/v2/topic/persistent/public/default/anything")
	if resp.StatusCode != 200 {
		t.Fatalf("lookup: %d %s", resp.StatusCode, body)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"brokerUrl", "brokerUrlTls", "httpUrl", "httpUrlTls", "nativeUrl"} {
		if _, ok := out[k]; !ok {
			t.Errorf("lookup answer lacks %s: %s", k, body)
		}
	}
	if out["brokerUrl"] != e.b.ServiceURL() || out["httpUrl"] != e.s.URL() {
		t.Errorf("lookup = %s", body)
	}
}

// With auto-creation off, the lookup of a persistent topic that does not exist is 404, as
// upstream's; an existing one is found.
func TestHTTPLookupMissingTopic(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *broker.Config) { c.AllowAutoTopicCreation = false })
	resp, body := do(t, "GET", e.s.URL()+"/lookup/v2/topic/persistent/public/default/nope")
	if resp.StatusCode != 404 || !strings.Contains(body, "Topic not found persistent://public/default/nope") {
		t.Errorf("lookup of a missing topic: %d %s, want 404", resp.StatusCode, body)
	}
	must(t, e.adm.Topics().Create(*topicName(t, "persistent://public/default/yes"), 0))
	if resp, body = do(t, "GET", e.s.URL()+"/lookup/v2/topic/persistent/public/default/yes"); resp.StatusCode != 200 {
		t.Errorf("lookup of an existing topic: %d %s", resp.StatusCode, body)
	}
}
