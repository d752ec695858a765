package policy

import (
	"hash/crc32"
	"slices"
	"testing"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

func TestBundleOfFollowsBoundaries(t *testing.T) {
	b, err := CheckBundles(&adminapi.BundlesData{NumBundles: 4})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"0x00000000_0x40000000", "0x40000000_0x80000000", "0x80000000_0xc0000000", "0xc0000000_0xffffffff"}; !slices.Equal(BundleRanges(b), want) {
		t.Fatalf("ranges = %v, want %v", BundleRanges(b), want)
	}
	seen := map[string]bool{}
	for i := range 200 {
		name := "persistent://public/default/t-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		h := crc32.ChecksumIEEE([]byte(name))
		got := BundleOf(b, name)
		if want := BundleRanges(b)[h>>30]; got != want {
			t.Errorf("%s (hash %#x) in %s, want %s", name, h, got, want)
		}
		seen[got] = true
	}
	if len(seen) != 4 {
		t.Errorf("200 names fell in %d bundles, want 4", len(seen))
	}
	if got := BundleOf(DefaultBundles(), "persistent://public/default/x"); got != "0x00000000_0xffffffff" {
		t.Errorf("one bundle: %s", got)
	}
}

func TestCheckBundlesRefusesWhatUpstreamRefuses(t *testing.T) {
	for _, b := range []*adminapi.BundlesData{
		{NumBundles: -1},
		{Boundaries: []string{"0x00000000", "0x80000000"}},
		{Boundaries: []string{"0x10", "0xffffffff"}},
		{Boundaries: []string{"0x00000000", "nope", "0xffffffff"}},
		{Boundaries: []string{"0x00000000", "0x1ffffffff"}},
	} {
		if got, err := CheckBundles(b); err == nil {
			t.Errorf("CheckBundles(%+v) = %+v, want a refusal", b, got)
		}
	}
	got, err := CheckBundles(nil)
	if err != nil || got.NumBundles != 1 {
		t.Errorf("CheckBundles(nil) = %+v, %v", got, err)
	}
}
