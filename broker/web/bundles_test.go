package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/apache/pulsar-client-go/pulsar"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/rest"
	"github.com/apache/pulsar-client-go/pulsaradmin/pkg/utils"
)

// A namespace's bundles, read with pulsaradmin's own REST client and BundlesData (v0.19.0's
// admin has no method for the path): created from a count or from boundaries, validated as
// upstream, answered by GET …/bundles, and naming what a bundle's unload and the broker's
// topic stats cover.

func bundlesOf(t *testing.T, e *env, ns string) (utils.BundlesData, error) {
	t.Helper()
	rc := &rest.Client{ServiceURL: e.s.URL(), HTTPClient: &http.Client{Timeout: 10 * time.Second}}
	var got utils.BundlesData
	err := rc.Get("/admin/v2/namespaces/"+ns+"/bundles", &got)
	return got, err
}

func TestNamespaceBundles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.adm.Namespaces()

	got, err := bundlesOf(t, e, "public/default")
	must(t, err)
	if want := utils.NewBundlesData([]string{"0x00000000", "0xffffffff"}); !slices.Equal(got.Boundaries, want.Boundaries) || got.NumBundles != 1 {
		t.Errorf("public/default bundles = %+v, want %+v", got, want)
	}

	// A count is cut as upstream's getBundles cuts it.
	must(t, ns.CreateNsWithNumBundles("public/four", 4))
	got, err = bundlesOf(t, e, "public/four")
	must(t, err)
	want := []string{"0x00000000", "0x40000000", "0x80000000", "0xc0000000", "0xffffffff"}
	if !slices.Equal(got.Boundaries, want) || got.NumBundles != 4 {
		t.Errorf("4 bundles = %+v, want %v", got, want)
	}
	pol, err := ns.GetPolicies("public/four")
	must(t, err)
	if pol.Bundles == nil || !slices.Equal(pol.Bundles.Boundaries, want) {
		t.Errorf("policies' bundles = %+v, want %v", pol.Bundles, want)
	}
	three := 3
	must(t, ns.CreateNsWithNumBundles("public/three", three))
	got, err = bundlesOf(t, e, "public/three")
	must(t, err)
	if want := []string{"0x00000000", "0x55555555", "0xaaaaaaaa", "0xffffffff"}; !slices.Equal(got.Boundaries, want) {
		t.Errorf("3 bundles = %+v, want %v", got, want)
	}

	// Boundaries are read as numbers, sorted, repeats dropped.
	given := utils.NewBundlesData([]string{"0xffffffff", "0x80000000", "0", "2147483648"})
	must(t, ns.CreateNsWithBundlesData("public/given", &given))
	got, err = bundlesOf(t, e, "public/given")
	must(t, err)
	if want := []string{"0x00000000", "0x80000000", "0xffffffff"}; !slices.Equal(got.Boundaries, want) || got.NumBundles != 2 {
		t.Errorf("given bundles = %+v, want %v", got, want)
	}

	short := utils.NewBundlesData([]string{"0x00000000", "0x80000000"})
	wantStatus(t, "bundles short of the range", ns.CreateNsWithBundlesData("public/short", &short), 400)
	wantStatus(t, "no bundles", ns.CreateNsWithNumBundles("public/none", -1), 400)
	if names, err := ns.GetNamespaces("public"); err != nil || slices.Contains(names, "public/short") || slices.Contains(names, "public/none") {
		t.Errorf("namespaces after refusals = %v, %v", names, err)
	}
	_, err = bundlesOf(t, e, "public/missing")
	wantStatus(t, "bundles of a missing namespace", err, 404)
}

// inBundle finds a topic name of ns whose CRC-32 is below (low) or at least (!low) 0x80000000.
func inBundle(ns string, low bool) string {
	for i := 0; ; i++ {
		name := fmt.Sprintf("persistent://%s/t-%d", ns, i)
		if (crc32.ChecksumIEEE([]byte(name)) < 0x80000000) == low {
			return name
		}
	}
}

func TestUnloadBundleAndBrokerStatsByBundle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ns := e.adm.Namespaces()
	must(t, ns.CreateNsWithNumBundles("public/two", 2))
	low, high := inBundle("public/two", true), inBundle("public/two", false)

	c := e.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, topic := range []string{low, high} {
		p, err := c.CreateProducer(pulsar.ProducerOptions{Topic: topic})
		must(t, err)
		_, err = p.Send(ctx, &pulsar.ProducerMessage{Payload: []byte("x")})
		must(t, err)
		p.Close()
	}

	raw, err := e.adm.BrokerStats().GetTopics()
	must(t, err)
	var byBundle map[string]map[string]map[string]map[string]json.RawMessage
	must(t, json.Unmarshal([]byte(raw), &byBundle))
	if _, ok := byBundle["public/two"]["0x00000000_0x80000000"]["persistent"][low]; !ok {
		t.Errorf("broker stats do not list %s in the low bundle: %s", low, raw)
	}
	if _, ok := byBundle["public/two"]["0x80000000_0xffffffff"]["persistent"][high]; !ok {
		t.Errorf("broker stats do not list %s in the high bundle: %s", high, raw)
	}

	wantStatus(t, "unload a bundle the namespace does not have", ns.UnloadNamespaceBundle("public/two", "0x00000000_0xffffffff"), 404)
	must(t, ns.UnloadNamespaceBundle("public/two", "0x00000000_0x80000000"))

	// An unloaded topic's counters start again (docs/protocol.md, Unloading); the other bundle's
	// topic was left as it was.
	for topic, want := range map[string]int64{low: 0, high: 1} {
		st, err := e.adm.Topics().GetStats(*topicName(t, topic))
		must(t, err)
		if st.MsgCounterIn != want {
			t.Errorf("%s: msgInCounter %d after unloading the low bundle, want %d", topic, st.MsgCounterIn, want)
		}
	}
}
