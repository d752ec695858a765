package admin_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/letterbox-dev/letterbox/client/admin"
)

// TestAuthorizationHook: a provider (OAuth2, say) is asked for the header on every call, wins
// over Token, and its failure fails the call before anything is sent.
func TestAuthorizationHook(t *testing.T) {
	t.Parallel()
	got := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		w.Write([]byte(`["c"]`))
	}))
	t.Cleanup(srv.Close)
	var n atomic.Int32
	fail := errors.New("token endpoint down")
	c, err := admin.New(admin.Options{URL: srv.URL, Token: "static", Authorization: func(context.Context) (string, error) {
		switch i := n.Add(1); i {
		case 3:
			return "", fail
		default:
			return fmt.Sprintf("Bearer fresh-%d", i), nil
		}
	}})
	must(t, err)
	for _, want := range []string{"Bearer fresh-1", "Bearer fresh-2"} {
		if _, err := c.Clusters(ctx(t)); err != nil {
			t.Fatal(err)
		}
		if h := <-got; h != want {
			t.Errorf("Authorization = %q, want %q", h, want)
		}
	}
	if _, err := c.Clusters(ctx(t)); !errors.Is(err, fail) {
		t.Errorf("err = %v, want the provider's", err)
	}
	if len(got) != 0 {
		t.Error("a call went out without the provider's header")
	}
}
