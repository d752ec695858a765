package cli

import (
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// --memory-limit reads sizes as Docker and the JVM do: K, M, G and T are powers of 1024, with
// or without B or iB, in any case; 0 turns the budget off.
func TestParseMemoryLimit(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"0": 0, "1048576": 1 << 20, "512k": 512 << 10, "256MB": 256 << 20, "256MiB": 256 << 20,
		"256m": 256 << 20, "1G": 1 << 30, "1.5GiB": 3 << 29, " 2 gb ": 2 << 30, "1T": 1 << 40, "100b": 100,
	} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "MB", "-1G", "1e9", "lots", "1PB", "NaN"} {
		if n, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", bad, n)
		}
	}
	for n, want := range map[int64]string{256 << 20: "256MiB", 3 << 29: "1536MiB", 1000: "1000", 1 << 40: "1TiB"} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
	var unset memoryLimit
	if runtime.GOOS == "linux" && unset.limit() <= 0 {
		t.Errorf("default memory limit %d on Linux, want a quarter of the machine's memory", unset.limit())
	}
}

// letterbox broker --in-memory --memory-limit SIZE budgets the broker, as /metrics reports;
// a SIZE that is not one is a usage error.
func TestBrokerMemoryLimitFlag(t *testing.T) {
	t.Parallel()
	rb := startBroker(t, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--in-memory", "--memory-limit", "64MB")
	status, body := get(t, rb.httpURL+"/metrics")
	want := `letterbox_memory_limit_bytes{cluster="standalone"} ` + strconv.FormatFloat(64<<20, 'g', -1, 64)
	if status != http.StatusOK || !strings.Contains(body, want) {
		t.Errorf("metrics %d lack %q:\n%s", status, want, body)
	}
	if code := rb.stop(t); code != ExitOK {
		t.Errorf("exit code %d", code)
	}
	if errOut := rb.stderr.String(); !strings.Contains(errOut, "memory_limit=64MiB") {
		t.Errorf("stderr does not say the budget:\n%s", errOut)
	}

	if code, _, errOut := run(t, "broker", "--in-memory", "--memory-limit", "lots"); code != ExitUsage || !strings.Contains(errOut, "memory-limit") {
		t.Errorf("--memory-limit lots: code %d, stderr %q", code, errOut)
	}
}
