package admin_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/client/admin"
)

// TestNamesUpstreamRules checks that topic and namespace names are read as upstream's TopicName
// and NamespaceName read them (client/naming), and that a name no broker would take is refused
// before any request is sent.
func TestNamesUpstreamRules(t *testing.T) {
	if tn, err := admin.ParseTopic("x-partition-3"); err != nil || tn.Partition != 3 || tn.String() != "persistent://public/default/x-partition-3" {
		t.Errorf("ParseTopic(x-partition-3) = %+v, %v", tn, err)
	}
	for _, bad := range []string{"bad tenant/ns/x", "persistent://t/n s/x", "persistent://t/c/ns/x", "t/ns", ""} {
		if _, err := admin.ParseTopic(bad); err == nil {
			t.Errorf("ParseTopic(%q) accepted", bad)
		}
	}
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Write([]byte("[]"))
	}))
	defer srv.Close()
	c, err := admin.New(admin.Options{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, bad := range []string{"bad tenant/ns", "t/n s", "t", "t/ns/x"} {
		if err := c.DeleteNamespace(ctx, bad, false); err == nil {
			t.Errorf("DeleteNamespace(%q) accepted", bad)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests sent for invalid names", n)
	}
}
