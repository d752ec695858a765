package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/internal/userconfig"
)

// A context's trusted_hosts is what lets its token follow the admin API's redirect to a host of
// the cluster that nothing else names: without it the token stays behind (401 at the owner),
// with it the call succeeds.
func TestContextTrustedHostsCarryTheToken(t *testing.T) {
	const token = "secret-token"
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"reason":"Authentication required"}`)
			return
		}
		io.WriteString(w, `["public"]`)
	}))
	defer owner.Close()
	_, port, _ := net.SplitHostPort(owner.Listener.Addr().String())
	ownerURL := "http://localhost:" + port // another host name than the admin URL's 127.0.0.1
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, ownerURL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer front.Close()

	tenants := func(trusted []string) error {
		var cf clientFlags
		cf.useContext(userconfig.Context{Name: "prod", ServiceURL: "pulsar://127.0.0.1:1", AdminURL: front.URL,
			Token: userconfig.Secret(token), TrustedHosts: trusted})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ad, cl, err := cf.connect(ctx, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		_, err = ad.Tenants(ctx)
		return err
	}
	if err := tenants(nil); err == nil {
		t.Fatal("without trusted_hosts the token followed the redirect to another host")
	}
	if err := tenants([]string{"localhost"}); err != nil {
		t.Fatalf("with trusted_hosts = [\"localhost\"]: %v", err)
	}
}
