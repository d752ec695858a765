package main

// The admin API under stalled requests: the latency of a cheap admin GET on `letterbox broker
// --in-memory` in its own process, first alone, then while many connections each hold a
// request the client never finishes (adminstall.go), and how long the broker takes to close
// those. The broker's read timeouts are what should close them; meanwhile the admin API must
// keep answering everyone else.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

const (
	// adminProbePath is the admin GET timed: answered from the broker's configuration, so
	// its latency is the HTTP server's and not a resource's.
	adminProbePath = "/admin/v2/clusters"
	adminProbes    = 200 // requests in each series, on each kind of connection
	// adminWarmups are requests sent, untimed, before the first series: the first connection
	// and the first answers pay for what later ones find ready, which would make the
	// unloaded series, the goal's yardstick, look slower than it is.
	adminWarmups = 20
	adminStalled = 500 // stalled connections held during the loaded series
	// adminStallBound is how long the stalled connections are watched: far past any read
	// timeout a broker would set, so that one still open then is one the broker keeps.
	adminStallBound = 2 * time.Minute
	// adminProbeTimeout gives up on one request; a request given up counts as failed, with
	// this as its latency.
	adminProbeTimeout = 2 * time.Second
	// adminSeriesTimeout bounds a series: whatever it has not sent by then is not sent.
	adminSeriesTimeout = 30 * time.Second
)

// Goals: the loaded p99 within 10× the unloaded one and 100 ms, every stalled request closed.
const (
	targetAdminP99Ratio = 10
	targetAdminP99      = 100 * time.Millisecond
)

// adminSeries is one series of requests on one kind of connection.
type adminSeries struct {
	lat      []time.Duration // every request's, failed ones included, sorted
	failed   int
	firstErr string
}

func (s adminSeries) percentile(p float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	return s.lat[int(p*float64(len(s.lat)-1))]
}

// adminReport is what the admin part measured; zero values were not measured.
type adminReport struct {
	// The series, each on a new connection per request (fresh) or on one kept alive.
	idleFresh, idleKept, loadedFresh, loadedKept adminSeries
	loadedMeasured                               bool
	// openedIn is the time opening the stalled connections took; openAfterLoad how many of
	// them were still open when the loaded series ended.
	openedIn      time.Duration
	openAfterLoad int
	stall         stallOutcome
	stallMeasured bool
	// rssIdle and rssStalled are the broker's RSS before and with the stalled connections.
	rssIdle, rssStalled int64
	others              float64 // CPUs other processes used during the loaded series
}

// measureAdmin runs the admin part on a broker of its own, so that the stalled connections
// weigh on nothing else.
func measureAdmin(ctx context.Context, r *adminReport, bin string, progress func(string, ...any), failed func(string, error)) {
	// The stalled connections, the probes' and a margin for the rest of the bench.
	if err := raiseFileLimit(adminStalled + 512); err != nil {
		failed("admin: open files", err)
		return
	}
	// The series, the bound on the stalled connections, and the broker's start and stop.
	ctx, cancel := context.WithTimeout(ctx, 3*adminSeriesTimeout+adminStallBound+time.Minute)
	defer cancel()
	b, err := startBroker(ctx, bin)
	if err != nil {
		failed("admin: letterbox broker", err)
		return
	}
	defer func() {
		if err := b.stop(); err != nil {
			failed("admin: stopping the letterbox broker", err)
		}
	}()
	url := b.httpURL + adminProbePath
	fresh := &http.Client{Timeout: adminProbeTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	kept := &http.Client{Timeout: adminProbeTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer kept.CloseIdleConnections()

	progress("admin: %d × 2 requests of GET %s, no load", adminProbes, adminProbePath)
	for range adminWarmups {
		_, _ = adminGet(ctx, fresh, url)
		_, _ = adminGet(ctx, kept, url)
	}
	r.idleFresh, r.idleKept = adminRequests(ctx, fresh, kept, url)
	if r.rssIdle, err = processRSS(b.pid()); err != nil {
		failed("admin: broker RSS", err)
	}

	progress("admin: %d stalled requests, then %d × 2 requests of GET %s", adminStalled, adminProbes, adminProbePath)
	t0 := time.Now()
	s, err := openStalled(ctx, strings.TrimPrefix(b.httpURL, "http://"), adminStalled, adminStallBound)
	r.openedIn = time.Since(t0)
	defer s.close()
	if err != nil {
		failed("admin: opening stalled requests", err)
		return
	}
	w := workload{pid: b.pid()}
	_, ours0, busy0, err := w.cpuSample()
	if err != nil {
		failed("admin: CPU", err)
		return
	}
	t1 := time.Now()
	r.loadedFresh, r.loadedKept = adminRequests(ctx, fresh, kept, url)
	took := time.Since(t1)
	r.openAfterLoad = s.stillOpen()
	r.loadedMeasured = true
	if _, ours1, busy1, err := w.cpuSample(); err == nil {
		r.others = max(0, (busy1-busy0)-(ours1-ours0)).Seconds() / took.Seconds()
	}
	if r.rssStalled, err = processRSS(b.pid()); err != nil {
		failed("admin: broker RSS", err)
	}

	progress("admin: waiting for the broker to close the stalled requests (at most %v)", adminStallBound)
	s.wait(ctx)
	s.close()
	r.stall = s.outcome()
	r.stallMeasured = ctx.Err() == nil
	if err := b.alive(); err != nil {
		failed("admin: letterbox broker", err)
	}
}

// adminRequests sends adminProbes requests on each kind of connection, alternating, one at a
// time, so that both kinds meet the same moments of the broker.
func adminRequests(ctx context.Context, fresh, kept *http.Client, url string) (onFresh, onKept adminSeries) {
	ctx, cancel := context.WithTimeout(ctx, adminSeriesTimeout)
	defer cancel()
	for range adminProbes {
		if ctx.Err() != nil {
			break
		}
		onFresh.add(adminGet(ctx, fresh, url))
		onKept.add(adminGet(ctx, kept, url))
	}
	slices.Sort(onFresh.lat)
	slices.Sort(onKept.lat)
	return onFresh, onKept
}

func (s *adminSeries) add(d time.Duration, err error) {
	s.lat = append(s.lat, d)
	if err != nil {
		s.failed++
		if s.firstErr == "" {
			s.firstErr = err.Error()
		}
	}
}

// adminGet times one GET of url, from the call to the last byte of the answer's body. A
// request that fails takes the time it failed after.
func adminGet(ctx context.Context, cl *http.Client, url string) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	resp, err := cl.Do(req)
	if err != nil {
		return time.Since(t0), err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d := time.Since(t0)
	if err != nil {
		return d, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return d, fmt.Errorf("GET %s: %s", adminProbePath, resp.Status)
	}
	return d, nil
}
