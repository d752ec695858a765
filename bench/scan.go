package main

// The whole-DLQ scan: client/triage's Scan, the engine of the TUI's scan, over a DLQ of a
// million dead letters on `letterbox broker --in-memory` in its own process, beside a bare
// reader of the official Go client reading the same letters in the same run. Every reading
// runs in a child process of its own (scanchild.go), so that its heap and peak RSS are the
// reading's alone; the rounds alternate the readers so that whatever else the machine does
// weighs on all alike.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/admin"
	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// Targets from the scan issue: the rate is met by either the absolute or the relative goal.
const (
	targetScanRate  = 150_000
	targetScanRatio = 0.60
	targetScanMem   = 200_000_000
	// The causes issue: facets and causes within 20 % of the plain scan's rate.
	targetFacetsRatio = 0.80
)

// scanFilter is the filtered scan's expression: one customer's letters, as a user hunting
// one order would type it.
const scanFilter = "key=customer-27"

// scanKeys is how many distinct customers the letters' keys name.
const scanKeys = 100_000

// scanReasons are the letters' reason properties, a few failures as applications word them.
var scanReasons = [...]string{
	"payment declined: card expired",
	"schema validation failed: amount_cents is missing",
	"timeout after 30s calling inventory-service",
	"customer not found",
	"java.lang.NullPointerException at OrderHandler.handle(OrderHandler.java:88)",
}

// scanRound is one round of every reading; nil: not measured.
type scanRound struct {
	scan, official, ours, filtered, facets *scanChildResult
	// scanMaxRSS is the scan child's ru_maxrss as its parent saw it, in bytes: a check on
	// the VmHWM the child read itself.
	scanMaxRSS int64
}

// scanReport is what the scan part measured.
type scanReport struct {
	n         int
	fill      time.Duration
	brokerRSS int64 // the broker's RSS holding the filled DLQ
	// brokerArgs are its flags, which say whether a memory budget had to be turned off.
	brokerArgs string
	rounds     []scanRound
	// wantMatches is how many letters the filter selects, from the fill's own recipe.
	wantMatches int64
	// refills are the fills of the brokers started after one was killed because it had not
	// let go of a reader within settleLimit.
	refills  []time.Duration
	skipped  string // why the part did not run, when the machine could not hold it
	profiles string // the directory of the children's CPU profiles, when asked for
	// incident is the facets reading of the incident DLQ (incidentN letters, incidentCauses
	// expected); nil when it failed or did not run.
	incident *scanChildResult
}

// scanLetters is the DLQ the scan reads: n dead letters of 1 KiB JSON as a DLQ router moves
// them from the four partitions of an orders topic consumed by subscription "billing": the
// origin's key and properties kept, REAL_TOPIC and ORIGIN_MESSAGE_ID added, RECONSUMETIMES on
// those that went through a retry topic first, and the application's reason. One letter in
// ten was published to the DLQ by the application itself and carries none of the router's
// properties; one in fifty has no key. It returns the origin topic too, which the broker
// must hold (see scanOriginSubs).
func scanLetters(n int) (dlqFill, string) {
	origin := fmt.Sprintf("persistent://public/default/bench-scan-orders-%d", time.Now().UnixNano())
	return dlqFill{
		topic: origin + "-billing" + client.DLQTopicSuffix,
		sub:   "audit",
		// As a router names its producer: origin, subscription, consumer name, a random suffix.
		producer: origin + "-billing-wk3ab-x4q9m" + client.DLQTopicSuffix,
		n:        n,
		letter: func(i int) *client.Message {
			key := scanKey(i)
			props := map[string]string{
				"content-type": "application/json",
				"traceparent":  fmt.Sprintf("00-%032x-%016x-01", uint64(i)*2654435761, uint64(i)),
				"reason":       scanReasons[[...]int{0, 0, 0, 1, 1, 2, 3, 4}[i%8]],
			}
			if i%10 != 9 {
				p := i % 4
				props[client.PropertyRealTopic] = origin + "-partition-" + strconv.Itoa(p)
				props[client.PropertyOriginMessageID] = strconv.Itoa(100+p) + ":" + strconv.Itoa(i/4) + ":" + strconv.Itoa(p) + ":-1"
				if i%2 == 0 {
					props[client.PropertyReconsumeTimes] = strconv.Itoa(1 + i/2%16)
				}
			}
			return &client.Message{Key: key, Properties: props, Payload: orderJSON(i, key)}
		},
	}, origin
}

// scanOriginSubs are the subscriptions of the letters' origin: triage.Scan asks the admin API
// for them, once per origin, to read each letter's subscription out of its producer's name.
var scanOriginSubs = []string{"billing", "billing-audit", "shipping"}

// scanKey is the key of letter i: a customer, each of scanKeys as often, none on one in fifty.
func scanKey(i int) string {
	if i%50 == 49 {
		return ""
	}
	return "customer-" + strconv.Itoa(i*7919%scanKeys) // 7919 is prime: every customer in turn
}

// orderJSON is an order of payloadSize bytes, its fields varying by letter.
func orderJSON(i int, customer string) []byte {
	b := make([]byte, 0, payloadSize)
	b = append(b, `{"order_id":"o-`...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, `","customer":"`...)
	b = append(b, customer...)
	b = append(b, `","amount_cents":`...)
	b = strconv.AppendInt(b, int64(100+i*37%90_000), 10)
	b = append(b, `,"currency":"EUR","lines":[{"sku":"SKU-`...)
	b = strconv.AppendInt(b, int64(i%5000), 10)
	b = append(b, `","qty":`...)
	b = strconv.AppendInt(b, int64(1+i%7), 10)
	b = append(b, `}],"note":"`...)
	const end = `"}`
	for len(b) < payloadSize-len(end) {
		b = append(b, "lorem ipsum "[len(b)%12])
	}
	return append(b, end...)
}

// scanExpected is what a scan of n letters must count: the distinct keys (the no-key bucket
// included) and the letters scanFilter selects.
func scanExpected(n int) (distinctKeys int, matches int64) {
	seen := make(map[string]bool, scanKeys+1)
	for i := range n {
		k := scanKey(i)
		seen[k] = true
		if k == "customer-27" {
			matches++
		}
	}
	return len(seen), matches
}

// scanMemoryNeeded is what the part needs free: the in-memory broker holds about 2.6 KB per
// letter of this DLQ (its RSS after the fill, which the report gives), and a child and the
// bench take the rest. Disk it needs none: the broker keeps the letters in memory.
func scanMemoryNeeded(n int) int64 { return int64(n)*2800 + 1<<30 }

// memAvailable is MemAvailable of /proc/meminfo, in bytes.
func memAvailable() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			fs := strings.Fields(rest)
			if len(fs) == 2 && fs[1] == "kB" {
				kb, err := strconv.ParseInt(fs[0], 10, 64)
				return kb << 10, err
			}
		}
	}
	return 0, errors.New("no MemAvailable in /proc/meminfo")
}

// measureScan fills a DLQ on a broker of its own and reads it o.rounds times each way,
// recording what fails and carrying on with what does not depend on it.
func measureScan(ctx context.Context, r *scanReport, o options, bin string, progress func(string, ...any), failed func(string, error)) {
	r.n = o.scanN
	s := &scanRun{r: r, o: o, bin: bin, progress: progress, failed: failed}
	if !s.prepare() {
		return
	}
	// A broker of its own, so that the million letters weigh on nothing else.
	progress("scan: producing a DLQ of %s dead letters of %d bytes, one entry each", thousands(o.scanN), payloadSize)
	var err error
	if s.d, err = openScanDLQ(ctx, bin, o.scanN); err != nil {
		failed("scan: the DLQ", err)
		return
	}
	defer func() {
		if s.d == nil { // killed after its last reading
			return
		}
		if err := s.d.b.stop(); err != nil {
			failed("scan: stopping the letterbox broker", err)
		}
	}()
	r.fill, r.brokerRSS, r.brokerArgs = s.d.fill, s.d.rss, s.d.args
	progress("scan: filled in %.1f s (%s letters/s)", r.fill.Seconds(), rate(float64(o.scanN)/r.fill.Seconds()))
	r.rounds = make([]scanRound, o.rounds)
	dead := map[string]bool{}
	for _, st := range scanPlan(o.rounds, s.readings()) {
		if ctx.Err() != nil || dead[st.rd.mode] {
			continue
		}
		if !s.read(ctx, st) {
			dead[st.rd.mode] = true
		}
	}
	if s.d != nil && ctx.Err() == nil {
		measureIncident(ctx, r, s.self, s.d, progress, failed)
	}
}

// scanRun is the scan part while it runs: its report, the broker and DLQ of the readings (nil
// between a broker killed and the next one started).
type scanRun struct {
	r        *scanReport
	o        options
	bin      string // the letterbox binary
	self     string // the bench binary, which the children run
	d        *scanDLQ
	progress func(string, ...any)
	failed   func(string, error)
}

// prepare checks that the machine can hold the part, and readies what the children need;
// false (with r.skipped, or a failure recorded) when the part cannot run.
func (s *scanRun) prepare() bool {
	need := scanMemoryNeeded(s.o.scanN)
	if avail, err := memAvailable(); err != nil {
		s.failed("scan: free memory", err)
		return false
	} else if avail < need {
		s.r.skipped = fmt.Sprintf("the in-memory broker holding %s letters and a reader need about %.1f GB of memory; the machine had %.1f GB available",
			thousands(s.o.scanN), float64(need)/1e9, float64(avail)/1e9)
		s.progress("scan: skipped: %s", s.r.skipped)
		return false
	}
	var err error
	if s.self, err = os.Executable(); err != nil {
		s.failed("scan: the bench binary", err)
		return false
	}
	if s.o.scanProfile != "" {
		if err := os.MkdirAll(s.o.scanProfile, 0o755); err != nil {
			s.failed("scan: the profile directory", err)
			return false
		}
		s.r.profiles = s.o.scanProfile
	}
	return true
}

// reading is one way of reading the DLQ: the child's mode, what its result must hold, and
// where a round keeps it.
type reading struct {
	mode  string
	check func(*scanChildResult) error
	keep  func(*scanRound, *scanChildResult)
}

// scanReadings are the part's readings, each checked against what the fill wrote.
type scanReadings struct{ official, scan, ours, facets, filtered reading }

func (s *scanRun) readings() scanReadings {
	n := s.o.scanN
	distinct, matches := scanExpected(n)
	s.r.wantMatches = matches
	all := func(res *scanChildResult) error {
		if res.Read != int64(n) {
			return fmt.Errorf("read %d letters of %d", res.Read, n)
		}
		return nil
	}
	var rs scanReadings
	rs.official = reading{modeOfficial, all, func(sr *scanRound, res *scanChildResult) { sr.official = res }}
	rs.scan = reading{modeScan, func(res *scanChildResult) error {
		if res.Read != int64(n) || res.Matched != res.Read || res.Indexed != n {
			return fmt.Errorf("read %d letters of %d, counted %d, indexed %d", res.Read, n, res.Matched, res.Indexed)
		}
		// Every breakdown holds what the fill wrote: the origin and its subscription, or, for the
		// letters the application wrote itself, the bucket of letters without them.
		if res.DistinctKeys != distinct || res.Reasons != len(scanReasons) || res.Origins != 2 || res.Subs != 2 {
			return fmt.Errorf("counted %d distinct keys, %d reasons, %d origins and %d subscriptions; want %d, %d, 2 and 2",
				res.DistinctKeys, res.Reasons, res.Origins, res.Subs, distinct, len(scanReasons))
		}
		return nil
	}, func(sr *scanRound, res *scanChildResult) { sr.scan = res }}
	rs.ours = reading{modeOurs, all, func(sr *scanRound, res *scanChildResult) { sr.ours = res }}
	// The fill's reasons are its causes: five groups, one per reason, most letters first.
	rs.facets = reading{modeFacets, func(res *scanChildResult) error {
		if err := rs.scan.check(res); err != nil {
			return err
		}
		if len(res.Causes) != len(scanReasons) || !strings.HasPrefix(res.Causes[0], fmt.Sprintf("%d reason %s", n*3/8, scanReasons[0])) {
			return fmt.Errorf("causes %q: want the %d reasons, %q first", res.Causes, len(scanReasons), scanReasons[0])
		}
		return nil
	}, func(sr *scanRound, res *scanChildResult) { sr.facets = res }}
	rs.filtered = reading{modeFiltered, func(res *scanChildResult) error {
		if res.Read != int64(n) || res.Matched != matches || res.Indexed != int(matches) {
			return fmt.Errorf("read %d letters of %d, matched %d, indexed %d; want %d matches", res.Read, n, res.Matched, res.Indexed, matches)
		}
		return nil
	}, func(sr *scanRound, res *scanChildResult) { sr.filtered = res }}
	return rs
}

// scanStep is one reading of one round.
type scanStep struct {
	round int
	rd    reading
}

// scanPlan orders the readings: the official reader, the scan and the scan with facets take
// turns every round; our bare reader and the filtered scan, which only explain the scan's
// figure, read once, in the first round.
func scanPlan(rounds int, rs scanReadings) []scanStep {
	var plan []scanStep
	for i := range rounds {
		plan = append(plan, scanStep{i, rs.official}, scanStep{i, rs.scan}, scanStep{i, rs.facets})
		if i == 0 {
			plan = append(plan, scanStep{i, rs.ours}, scanStep{i, rs.filtered})
		}
	}
	return plan
}

// read performs one step in a child, on a new broker and DLQ when the last was killed, and
// keeps its figures; false when it failed (recorded), so that the mode is not tried again.
func (s *scanRun) read(ctx context.Context, st scanStep) bool {
	if s.d == nil {
		s.progress("scan: a new broker, and the DLQ filled again")
		d, err := openScanDLQ(ctx, s.bin, s.o.scanN)
		if err != nil {
			s.failed("scan: filling the DLQ again", err)
			return false
		}
		s.d = d
		s.r.refills = append(s.r.refills, d.fill)
	}
	name := fmt.Sprintf("scan: %s [round %d/%d]", st.rd.mode, st.round+1, s.o.rounds)
	s.progress("%s", name)
	profile := ""
	if s.o.scanProfile != "" {
		profile = filepath.Join(s.o.scanProfile, fmt.Sprintf("%s-%d.pprof", st.rd.mode, st.round+1))
	}
	res, maxRSS, err := runScanChild(ctx, s.self, s.d, st.rd.mode, s.o.scanN, profile)
	if err == nil {
		err = st.rd.check(res)
	}
	if err == nil {
		var settled bool
		if res.settle, settled = s.d.settle(ctx); !settled {
			// Keep the figures, and give the next reading a broker that is not busy.
			res.unsettled = true
			s.progress("scan: the broker had not dropped the reader's subscription %v after its process exited; killing it", settleLimit)
			s.d.b.kill()
			s.d = nil
		}
	}
	if err == nil && s.d != nil {
		err = s.d.b.alive()
	}
	if err != nil {
		s.failed(name, err)
		if s.d != nil && s.d.b.alive() != nil {
			s.d = nil // the next reading starts a new broker
		}
		return false
	}
	s.progress("%s: %s letters/s (closing the reader %.1f s)", name, rate(res.rate()), res.Closing.Seconds())
	st.rd.keep(&s.r.rounds[st.round], res)
	if st.rd.mode == modeScan {
		s.r.rounds[st.round].scanMaxRSS = maxRSS
	}
	return true
}

// The incident of the causes issue at its full size: 89,000 letters of one region whose
// downstream was down, 9,000 with an empty or UNKNOWN key, 1,000 whose payload is not JSON.
const incidentN = 99_000

var incidentCauses = []string{"89000 property region=eu", "9000 key empty or UNKNOWN", "1000 payload not JSON"}

// incidentLetters is that DLQ, interleaved as the letters would arrive.
func incidentLetters(origin string) dlqFill {
	others := []string{"us-east", "us-west", "ap-south", "ap-east", "sa", "af", "me", "ca"}
	return dlqFill{topic: origin + "-billing" + client.DLQTopicSuffix, sub: "billing-keep", n: incidentN,
		producer: origin + "-billing-c1abc-x9y8z" + client.DLQTopicSuffix,
		letter: func(i int) *client.Message {
			m := &client.Message{Key: "order-" + strconv.Itoa(i), Payload: fmt.Appendf(nil, `{"order":%d,"sku":"A-1"}`, i),
				Properties: map[string]string{"region": "eu", client.PropertyRealTopic: origin}}
			switch {
			case i%99 == 7: // 1,000; their i%11 is 7, so none is below
				m.Payload = []byte("<xml>not json</xml>")
				m.Properties["region"] = others[i%len(others)]
			case i%11 == 3: // 9,000
				m.Key = []string{"", "UNKNOWN"}[i%2]
				m.Properties["region"] = others[i%len(others)]
			}
			return m
		}}
}

// measureIncident fills the incident's DLQ on d's broker and has a facets reading split it.
func measureIncident(ctx context.Context, r *scanReport, self string, d *scanDLQ, progress func(string, ...any), failed func(string, error)) {
	origin := fmt.Sprintf("persistent://public/default/bench-incident-orders-%d", time.Now().UnixNano())
	inc := &scanDLQ{b: d.b, ad: d.ad, f: incidentLetters(origin)}
	progress("scan: the incident, %s letters", thousands(incidentN))
	if _, err := fillDLQ(ctx, d.b.serviceURL, inc.f); err != nil {
		failed("scan: filling the incident's DLQ", err)
		return
	}
	res, _, err := runScanChild(ctx, self, inc, modeFacets, incidentN, "")
	if err == nil && fmt.Sprint(res.Causes) != fmt.Sprint(incidentCauses) {
		err = fmt.Errorf("causes %q, want %q", res.Causes, incidentCauses)
	}
	if err != nil {
		failed("scan: the incident's causes", err)
		return
	}
	r.incident = res
}

// scanDLQ is the scan part's broker and the DLQ filled on it.
type scanDLQ struct {
	b    *brokerProc
	ad   *admin.Client
	f    dlqFill
	fill time.Duration // producing the letters
	rss  int64         // the broker's RSS once they are in
	args string        // the broker's flags after `letterbox broker`
}

// openScanDLQ starts a broker and fills a DLQ of n letters on it.
func openScanDLQ(ctx context.Context, bin string, n int) (*scanDLQ, error) {
	b, args, err := startDLQBroker(ctx, bin)
	if err != nil {
		return nil, err
	}
	d := &scanDLQ{b: b, args: strings.Join(args, " ")}
	var origin string
	d.f, origin = scanLetters(n)
	if d.ad, err = admin.New(admin.Options{URL: b.httpURL, Timeout: 10 * time.Second}); err == nil {
		err = createOrigin(ctx, d.ad, origin)
	}
	if err == nil {
		if d.fill, err = fillDLQ(ctx, b.serviceURL, d.f); err == nil {
			err = b.alive()
		}
	}
	if err != nil {
		b.kill()
		return nil, fmt.Errorf("filling the DLQ: %w", err)
	}
	d.rss, _ = processRSS(b.pid())
	return d, nil
}

// createOrigin creates the letters' origin, an orders topic of four partitions, with its
// subscriptions.
func createOrigin(ctx context.Context, ad *admin.Client, origin string) error {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	if err := ad.CreateTopic(ctx, origin, 4, nil); err != nil {
		return fmt.Errorf("creating the origin topic: %w", err)
	}
	for _, sub := range scanOriginSubs {
		if err := ad.CreateSubscription(ctx, origin, sub, adminapi.Earliest); err != nil {
			return fmt.Errorf("creating the origin's subscription %s: %w", sub, err)
		}
	}
	return nil
}

// settleLimit bounds the wait for the broker to forget a reader after its process exits: a
// few milliseconds when it works as it should.
const settleLimit = 30 * time.Second

// settle waits until the DLQ has no subscription but the fill's: the last child's reader, a
// non-durable subscription, is gone, so that the next reading does not meet its leftovers
// (the broker works on them under the topic's lock). It returns how long that took, and
// false when it gave up after settleLimit.
func (d *scanDLQ) settle(ctx context.Context) (time.Duration, bool) {
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(ctx, settleLimit)
	defer cancel()
	for {
		if subs, err := d.ad.Subscriptions(ctx, d.f.topic); err == nil && len(subs) == 1 && subs[0] == d.f.sub {
			return time.Since(t0), true
		}
		select {
		case <-ctx.Done():
			return time.Since(t0), false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// runScanChild runs one reading in a child process and returns what it measured and its
// ru_maxrss in bytes. The child gives up on its own after a floor rate of 10,000 letters/s;
// the parent kills it some seconds later should it not.
func runScanChild(ctx context.Context, self string, d *scanDLQ, mode string, n int, profile string) (*scanChildResult, int64, error) {
	b := d.b
	limit := setupTimeout + time.Duration(n)*100*time.Microsecond
	ctx, cancel := context.WithTimeout(ctx, limit+setupTimeout)
	defer cancel()
	args := []string{scanChildArg, "-mode", mode, "-url", b.serviceURL, "-admin", b.httpURL, "-topic", d.f.topic,
		"-n", strconv.Itoa(n), "-broker-pid", strconv.Itoa(b.pid()), "-timeout", limit.String()}
	if mode == modeFiltered {
		args = append(args, "-filter", scanFilter)
	}
	if profile != "" {
		args = append(args, "-cpuprofile", profile)
	}
	cmd := exec.CommandContext(ctx, self, args...)
	var stdout bytes.Buffer
	stderr := &tail{max: 8 << 10}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	// Should the bench die, take the child with it; once killed, do not wait on its pipes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, 0, fmt.Errorf("no answer within %v, killed; stderr:\n%s", limit+setupTimeout, stderr)
		}
		return nil, 0, fmt.Errorf("%w; stderr:\n%s", err, stderr)
	}
	var res scanChildResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return nil, 0, fmt.Errorf("reading the child's result %q: %w", stdout.String(), err)
	}
	var maxRSS int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		maxRSS = ru.Maxrss << 10 // kilobytes on Linux
	}
	return &res, maxRSS, nil
}
