package admin_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/letterbox-dev/letterbox/client/admin"
)

// TestDo: the raw call sends an escaped path and query as given and hands back the body; a
// failure is an *Error like any typed call's.
func TestDo(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.EscapedPath() != "/admin/v2/persistent/t/ns/a%20b/stats" {
			http.Error(w, `{"reason":"Topic not found"}`, http.StatusNotFound)
			return
		}
		w.Write([]byte(r.URL.RawQuery))
	}))
	t.Cleanup(srv.Close)
	c, err := admin.New(admin.Options{URL: srv.URL})
	must(t, err)

	resp, err := c.Do(ctx(t), http.MethodGet, "/admin/v2/persistent/t/ns/a%20b/stats", url.Values{"perPartition": {"false"}}, nil)
	must(t, err)
	b, err := io.ReadAll(resp.Body)
	must(t, err)
	must(t, resp.Body.Close())
	if string(b) != "perPartition=false" {
		t.Errorf("query = %q", b)
	}
	if _, err := c.Do(ctx(t), http.MethodGet, "/admin/v2/none", nil, nil); !admin.IsNotFound(err) {
		t.Errorf("err = %v, want a 404", err)
	}
	if _, err := c.Do(ctx(t), http.MethodGet, "/admin/v2/x?y=1", nil, nil); err == nil {
		t.Error("a path with a query accepted")
	}
}
