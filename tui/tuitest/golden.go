// Package tuitest holds the TUI's test helpers: golden files with an -update flag, and views
// rendered at a fixed size and colour profile. Every test package under tui/ imports it, so
// `go test ./tui/... -update` (make test-update) is accepted by all of them.
package tuitest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
)

// The -update flag is registered by charmbracelet's golden package (teatest uses it too, and a
// flag cannot be defined twice); importing it here gives every TUI test package the flag.
var _ = golden.RequireEqual[[]byte]

// Update reports whether -update was given: rewrite golden files instead of comparing.
func Update() bool {
	f := flag.Lookup("update")
	if f == nil {
		return false
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	v, _ := g.Get().(bool)
	return v
}

// Golden compares got with testdata/<name>.golden (or writes it with -update).
func Golden(t *testing.T, name string, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if Update() {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `make test-update` to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the view (make test-update refreshes it):\n%s", path, diff(string(want), got))
	}
}

// Plain strips styles from a view and trims the spaces that pad each line: what the golden
// text files hold.
func Plain(view string) string {
	lines := strings.Split(ansi.Strip(view), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// Profile renders view as a terminal with the given colour profile would receive it, so
// colour goldens do not depend on the machine running the tests.
func Profile(view string, p colorprofile.Profile) string {
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: p}
	_, _ = w.Write([]byte(view))
	return buf.String()
}

// diff shows the first differing lines.
func diff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	n := 0
	for i := 0; i < max(len(wl), len(gl)) && n < 8; i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			n++
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  want: " + w + "\n  got:  " + g + "\n")
		}
	}
	return b.String()
}
