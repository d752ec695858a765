package web_test

import (
	"context"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"
)

// TestClients: each connection that made a request is listed by its remote address, as long
// as its last request is at or after the time asked about.
func TestClients(t *testing.T) {
	s := newServer(t)
	start := time.Now()
	var locals []string
	for range 2 { // two clients, each on a connection of its own
		var local string
		tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err == nil {
				local = c.LocalAddr().String()
			}
			return c, err
		}}
		hc := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		resp, err := hc.Get(s.URL() + "/admin/v2/clusters")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		tr.CloseIdleConnections()
		locals = append(locals, local)
	}
	got := s.Clients(start)
	slices.Sort(got)
	slices.Sort(locals)
	if !slices.Equal(got, locals) {
		t.Errorf("clients since the start: %v, want %v", got, locals)
	}
	if got := s.Clients(time.Now().Add(time.Second)); len(got) != 0 {
		t.Errorf("clients since a second from now: %v", got)
	}
}
