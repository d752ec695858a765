package policy

import (
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
	"strings"

	"github.com/letterbox-dev/letterbox/client/adminapi"
)

// A namespace's bundles, as upstream's NamespaceBundleFactory splits it: the 32-bit hash range
// of its topic names cut at ascending boundaries ("0x%08x", from 0x00000000 to 0xffffffff), a
// topic belonging to the bundle its name's CRC-32 falls in. A single broker owns every bundle,
// so they decide nothing but which topics a bundle's unload and its stats name.

// Upstream's first and last boundary.
const (
	firstBoundary = 0
	lastBoundary  = 1<<32 - 1
)

// DefaultBundles is one bundle over the whole hash range.
func DefaultBundles() *adminapi.BundlesData {
	return &adminapi.BundlesData{Boundaries: []string{boundary(firstBoundary), boundary(lastBoundary)}, NumBundles: 1}
}

// NewBundles splits the hash range into n bundles of equal size, the last taking the
// remainder, as upstream's getBundles.
func NewBundles(n int) (*adminapi.BundlesData, error) {
	if n <= 0 || int64(n) > 1<<32 {
		return nil, InvalidBundles("Invalid number of bundles. Number of bundles has to be in the range of (0, 2^32].")
	}
	seg := int64(1<<32) / int64(n)
	out := []string{boundary(firstBoundary)}
	for i := 1; i < n; i++ {
		out = append(out, boundary(int64(i)*seg))
	}
	out = append(out, boundary(lastBoundary))
	return &adminapi.BundlesData{Boundaries: out, NumBundles: n}, nil
}

// CheckBundles returns the bundles a namespace is created with, as upstream reads what a client
// sent: no boundaries means numBundles equal bundles (nil or none: one bundle, letterbox's
// default); boundaries are read as numbers (decimal, 0x hexadecimal or 0 octal, as Java's
// Long.decode), sorted with repeats dropped, and must run from 0x00000000 to 0xffffffff.
func CheckBundles(b *adminapi.BundlesData) (*adminapi.BundlesData, error) {
	if b == nil || (len(b.Boundaries) == 0 && b.NumBundles == 0) {
		return DefaultBundles(), nil
	}
	if len(b.Boundaries) == 0 {
		return NewBundles(b.NumBundles)
	}
	var points []int64
	for _, s := range b.Boundaries {
		v, err := strconv.ParseInt(strings.TrimSpace(s), 0, 64)
		if err != nil || v < 0 || v > lastBoundary {
			return nil, InvalidBundles(fmt.Sprintf("Invalid bundle boundary %q", s))
		}
		points = append(points, v)
	}
	slices.Sort(points)
	points = slices.Compact(points)
	if len(points) < 2 || points[0] != firstBoundary || points[len(points)-1] != lastBoundary {
		return nil, InvalidBundles(fmt.Sprintf("Input bundles do not cover the whole hash range. first:%s, last:%s",
			boundary(points[0]), boundary(points[len(points)-1])))
	}
	out := &adminapi.BundlesData{NumBundles: len(points) - 1}
	for _, p := range points {
		out.Boundaries = append(out.Boundaries, boundary(p))
	}
	return out, nil
}

// InvalidBundles is why a namespace's bundles are refused, in upstream's words (it answers 400).
type InvalidBundles string

func (e InvalidBundles) Error() string { return string(e) }

func boundary(v int64) string { return fmt.Sprintf("0x%08x", v) }

// BundleRanges are the names of b's bundles, upstream's "0x00000000_0x40000000".
func BundleRanges(b *adminapi.BundlesData) []string {
	var out []string
	for i := 0; i+1 < len(b.Boundaries); i++ {
		out = append(out, b.Boundaries[i]+"_"+b.Boundaries[i+1])
	}
	return out
}

// BundleOf names the bundle of b that topic (a full name, a partition's own) belongs to: the
// one whose range holds the CRC-32 of the name, lower bound included, upper excluded but for
// the last. Boundaries that do not read (none a broker stored) name the whole range.
func BundleOf(b *adminapi.BundlesData, topic string) string {
	if len(b.Boundaries) == 2 { // one bundle, as most namespaces have: no hash to take
		return b.Boundaries[0] + "_" + b.Boundaries[1]
	}
	h := int64(crc32.ChecksumIEEE([]byte(topic)))
	for i := 0; i+1 < len(b.Boundaries); i++ {
		hi, err := strconv.ParseInt(b.Boundaries[i+1], 0, 64)
		if err != nil {
			break
		}
		if h < hi || i+2 == len(b.Boundaries) {
			return b.Boundaries[i] + "_" + b.Boundaries[i+1]
		}
	}
	return boundary(firstBoundary) + "_" + boundary(lastBoundary)
}
