package admin_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/letterbox-dev/letterbox/client/admin"
)

func TestHealth(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	must(t, c.Health(ctx(t)))

	// A broker whose check fails, in upstream's two ways: an error status, or another answer.
	for body, status := range map[string]int{`{"reason":"heartbeat timed out"}`: http.StatusInternalServerError, "not ok": http.StatusOK} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/admin/v2/brokers/health" {
				http.NotFound(w, r)
				return
			}
			w.WriteHeader(status)
			w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		bad, err := admin.New(admin.Options{URL: srv.URL})
		must(t, err)
		err = bad.Health(ctx(t))
		wantHTTP := 0 // a 200 with another answer is not an *Error
		if status != http.StatusOK {
			wantHTTP = status
		}
		if err == nil || admin.StatusOf(err) != wantHTTP || (wantHTTP != 0 && !strings.Contains(err.Error(), "heartbeat timed out")) {
			t.Errorf("health answering %d %s: %v", status, body, err)
		}
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	b, c := start(t)
	x := ctx(t)
	const topic = "persistent://public/default/measured"
	produce(t, b, topic, "a", "b")
	text, err := c.Metrics(x)
	must(t, err)
	if !strings.Contains(text, "# TYPE pulsar_active_connections gauge") || !strings.Contains(text, `topic="`+topic+`"`) {
		t.Errorf("metrics lack the connection gauge or the topic:\n%s", text)
	}
}

// ActiveBrokers names the broker by its web address, as upstream's brokers/{cluster} does.
func TestActiveBrokers(t *testing.T) {
	t.Parallel()
	b, c := start(t)
	clusters, err := c.Clusters(ctx(t))
	must(t, err)
	if len(clusters) == 0 {
		t.Fatal("no cluster")
	}
	got, err := c.ActiveBrokers(ctx(t), clusters[0])
	must(t, err)
	want := strings.TrimPrefix(b.AdminURL(), "http://")
	if len(got) != 1 || got[0] != want {
		t.Errorf("active brokers = %v, want [%s]", got, want)
	}
}

func TestRuntimeConfiguration(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	conf, err := c.RuntimeConfiguration(ctx(t))
	must(t, err)
	if conf["acknowledgmentAtBatchIndexLevelEnabled"] != "true" {
		t.Errorf("acknowledgmentAtBatchIndexLevelEnabled = %q in %d keys", conf["acknowledgmentAtBatchIndexLevelEnabled"], len(conf))
	}
}
