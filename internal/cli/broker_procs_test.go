package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime"
	"testing"
)

// How many CPUs `letterbox broker` runs Go code on: the flag, else GOMAXPROCS, else one.
func TestBrokerProcs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		given  bool
		procs  int
		env    string
		want   int
		change bool
	}{
		{name: "default", want: 1, change: true},
		{name: "GOMAXPROCS set", env: "3", change: false},
		{name: "--procs 2", given: true, procs: 2, want: 2, change: true},
		{name: "--procs 2 over GOMAXPROCS", given: true, procs: 2, env: "3", want: 2, change: true},
		{name: "--procs 0", given: true, procs: 0, want: runtime.NumCPU(), change: true},
	} {
		f := brokerFlags{procs: tt.procs}
		if !tt.given {
			f.procs = 1 // the flag's default
		}
		given := map[string]bool{"procs": tt.given}
		getenv := func(k string) string {
			if k == "GOMAXPROCS" {
				return tt.env
			}
			return ""
		}
		n, change := f.procsFor(given, getenv)
		if change != tt.change || (change && n != tt.want) {
			t.Errorf("%s: %d, %v; want %d, %v", tt.name, n, change, tt.want, tt.change)
		}
	}
}

// RunProcess hands the broker's choice to the process's SetProcs, before anything else can
// fail; Run, as tests use it, leaves the runtime alone.
func TestBrokerProcsThroughProcess(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing.conf")
	args := []string{"broker", "--in-memory", "--procs", "2", "--config", missing}
	var set []int
	p := Process{SetProcs: func(n int) { set = append(set, n) }}
	var out, errOut bytes.Buffer
	if code := RunProcess(context.Background(), p, args, &out, &errOut); code != ExitUsage {
		t.Fatalf("code %d, stderr %s", code, errOut.String())
	}
	if len(set) != 1 || set[0] != 2 {
		t.Errorf("SetProcs calls %v, want [2]", set)
	}

	before := runtime.GOMAXPROCS(0)
	if code, _, _ := run(t, args...); code != ExitUsage {
		t.Fatalf("Run: code %d", code)
	}
	if runtime.GOMAXPROCS(0) != before {
		t.Error("Run changed GOMAXPROCS")
	}
}
