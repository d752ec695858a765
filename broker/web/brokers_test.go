package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/apache/pulsar-client-go/pulsar"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/broker/storage"
)

// The brokers resource with pulsaradmin: the active brokers and the leader (this broker, by
// its web host:port), and dynamic configuration that takes effect at once.
func TestPulsarAdminBrokers(t *testing.T) {
	e := newEnv(t)
	brokers := e.adm.Brokers()

	for _, list := range []func() ([]string, error){
		func() ([]string, error) { return brokers.GetActiveBrokers("standalone") },
		brokers.GetListActiveBrokers,
	} {
		got, err := list()
		must(t, err)
		if !slices.Equal(got, []string{e.s.Addr()}) {
			t.Fatalf("active brokers %v, want [%s]", got, e.s.Addr())
		}
	}
	leader, err := brokers.GetLeaderBroker()
	must(t, err)
	if leader.ServiceURL != e.s.URL() || leader.BrokerID != e.s.Addr() {
		t.Fatalf("leader %+v", leader)
	}

	names, err := brokers.GetDynamicConfigurationNames()
	must(t, err)
	if !slices.Contains(names, "allowAutoTopicCreation") {
		t.Fatalf("dynamic keys %v lack allowAutoTopicCreation", names)
	}
	values, err := brokers.GetAllDynamicConfigurations()
	must(t, err)
	if len(values) != 0 {
		t.Fatalf("overrides before any update: %v", values)
	}

	// Refused as upstream refuses them: non-dynamic and unknown keys.
	for _, kv := range [][2]string{{"maxMessageSize", "2048"}, {"noSuchKey", "1"}} {
		if err := brokers.UpdateDynamicConfiguration(kv[0], kv[1]); status(err) != http.StatusPreconditionFailed {
			t.Fatalf("update %s=%s: %v, want 412", kv[0], kv[1], err)
		}
	}
	// Stored as given, as upstream stores it, and answered back; a number that does not read
	// as one is not applied: the configured value stays in effect.
	must(t, brokers.UpdateDynamicConfiguration("defaultNumPartitions", "many"))
	values, err = brokers.GetAllDynamicConfigurations()
	must(t, err)
	runtime, err := brokers.GetRuntimeConfigurations()
	must(t, err)
	if values["defaultNumPartitions"] != "many" || runtime["defaultNumPartitions"] != "1" {
		t.Fatalf("after defaultNumPartitions=many: overrides %v, runtime %s", values, runtime["defaultNumPartitions"])
	}
	must(t, brokers.DeleteDynamicConfiguration("defaultNumPartitions"))

	// In effect at once: auto-creation off, a producer on a new topic is refused.
	must(t, brokers.UpdateDynamicConfiguration("allowAutoTopicCreation", "false"))
	values, err = brokers.GetAllDynamicConfigurations()
	must(t, err)
	if values["allowAutoTopicCreation"] != "false" {
		t.Fatalf("overrides %v", values)
	}
	runtime, err = brokers.GetRuntimeConfigurations()
	must(t, err)
	if runtime["allowAutoTopicCreation"] != "false" || runtime["clusterName"] != "standalone" {
		t.Fatalf("runtime configuration %v", runtime)
	}
	c := e.client(t)
	if p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: "persistent://public/default/dyn-off"}); err == nil {
		p.Close()
		t.Fatal("a producer auto-created a topic with allowAutoTopicCreation=false")
	}
	must(t, brokers.DeleteDynamicConfiguration("allowAutoTopicCreation"))
	p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: "persistent://public/default/dyn-on"})
	must(t, err)
	p.Close()
	if err := brokers.DeleteDynamicConfiguration("maxMessageSize"); status(err) != http.StatusPreconditionFailed {
		t.Fatalf("delete of a non-dynamic key: %v, want 412", err)
	}
}

// Dynamic configuration is kept in the store's metadata, as upstream keeps it in its metadata
// store: a durable broker started again has the overrides of the last run.
func TestPulsarAdminDynamicConfigurationSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	start := func() *env {
		store, err := storage.OpenFileStore(dir, storage.FileStoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return newEnv(t, broker.WithStore(store))
	}
	e := start()
	must(t, e.adm.Brokers().UpdateDynamicConfiguration("defaultNumPartitions", "4"))
	must(t, e.adm.Brokers().UpdateDynamicConfiguration("allowAutoTopicCreationType", "partitioned"))
	must(t, e.adm.Brokers().DeleteDynamicConfiguration("allowAutoTopicCreationType"))
	e.s.Close()
	e.b.Close()

	e = start()
	values, err := e.adm.Brokers().GetAllDynamicConfigurations()
	must(t, err)
	if len(values) != 1 || values["defaultNumPartitions"] != "4" {
		t.Fatalf("overrides after a restart: %v, want defaultNumPartitions=4 alone", values)
	}
	runtime, err := e.adm.Brokers().GetRuntimeConfigurations()
	must(t, err)
	if runtime["defaultNumPartitions"] != "4" || runtime["allowAutoTopicCreationType"] != "non-partitioned" {
		t.Fatalf("runtime configuration after a restart: %v", runtime)
	}
}

// As pulsaradmin's own test of it: a dynamic value with '/' in it, escaped in the path, is
// answered 200 and stored as given; a boolean key reads any value but "true" as false, as
// upstream's Boolean.valueOf does.
func TestDynamicConfigurationValueStoredAsGiven(t *testing.T) {
	e := newEnv(t)
	value := `{"key/123":"https://example.com/"}`
	req, err := http.NewRequest(http.MethodPost, e.s.URL()+"/admin/v2/brokers/configuration/allowAutoSubscriptionCreation/"+url.PathEscape(value), nil)
	must(t, err)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST of a value with '/': %s, want 200", resp.Status)
	}
	brokers := e.adm.Brokers()
	values, err := brokers.GetAllDynamicConfigurations()
	must(t, err)
	if values["allowAutoSubscriptionCreation"] != value {
		t.Fatalf("stored %q, want %q", values["allowAutoSubscriptionCreation"], value)
	}
	runtime, err := brokers.GetRuntimeConfigurations()
	must(t, err)
	if runtime["allowAutoSubscriptionCreation"] != "false" {
		t.Fatalf("in effect %q, want false", runtime["allowAutoSubscriptionCreation"])
	}
	must(t, brokers.UpdateDynamicConfiguration("allowAutoSubscriptionCreation", "TRUE"))
	runtime, err = brokers.GetRuntimeConfigurations()
	must(t, err)
	if runtime["allowAutoSubscriptionCreation"] != "true" {
		t.Fatalf("after TRUE: in effect %q, want true", runtime["allowAutoSubscriptionCreation"])
	}
}
