package cli

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// --memory-limit: the memory budget of an in-memory broker's data (`letterbox broker
// --in-memory`, and the embedded broker of `letterbox demo`). Past it, producers meet the
// backlog-quota behaviour of backlogQuotaDefaultRetentionPolicy (broker/quota.go) instead of the
// process growing until the kernel kills it. The default is a quarter of the machine's memory
// (of the container's, when its limit is lower); 0 turns the budget off. A broker that keeps
// its data on disk is not budgeted.

// memoryLimit is the value of --memory-limit; unset, the default applies.
type memoryLimit struct {
	bytes int64
	set   bool
}

func (m *memoryLimit) String() string {
	if m == nil || !m.set {
		return "" // the default depends on the machine: the help says how
	}
	return formatSize(m.bytes)
}

func (m *memoryLimit) Set(s string) error {
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	m.bytes, m.set = n, true
	return nil
}

// limit is the budget in bytes: the flag's, else a quarter of the machine's memory (0, no
// budget, when that is unknown).
func (m *memoryLimit) limit() int64 {
	if m.set {
		return m.bytes
	}
	return defaultMemoryLimit()
}

const memoryLimitUsage = "keep an in-memory broker's data under `SIZE` (256MB, 1GiB, bytes; 0: no limit); past it producers are held back as by a backlog quota (default: a quarter of this machine's memory)"

// defaultMemoryLimit is a quarter of the memory this process may use.
func defaultMemoryLimit() int64 {
	return machineMemory() / 4
}

// sizeUnits are --memory-limit's suffixes, case-insensitive. K, M, G and T are powers of 1024
// whether or not they are followed by B or iB, as in Docker's and the JVM's memory sizes.
var sizeUnits = []struct {
	suffix string
	scale  float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"tb", 1 << 40},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// parseSize reads a memory size: a number, optionally with a fraction, and a unit.
func parseSize(s string) (int64, error) {
	text := strings.ToLower(strings.TrimSpace(s))
	scale := 1.0
	for _, u := range sizeUnits {
		if strings.HasSuffix(text, u.suffix) {
			text, scale = strings.TrimSpace(strings.TrimSuffix(text, u.suffix)), u.scale
			break
		}
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || text == "" || strings.ContainsAny(text, "eE") {
		return 0, fmt.Errorf("%q is not a size: want a number and a unit, such as 256MB or 1GiB", s)
	}
	n := v * scale
	switch {
	case math.IsNaN(n) || n < 0:
		return 0, errors.New("a size must not be negative")
	case n >= math.MaxInt64:
		return 0, fmt.Errorf("%q is too large", s)
	}
	return int64(n), nil
}

// formatSize writes n in the largest binary unit that divides it.
func formatSize(n int64) string {
	for _, u := range []struct {
		name  string
		scale int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.scale && n%u.scale == 0 {
			return strconv.FormatInt(n/u.scale, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}
