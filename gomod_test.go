package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"go/version"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestGoVersionIsDependenciesFloor checks that go.mod asks for the lowest Go its dependencies
// allow, so that the module forces no one's toolchain higher than it must (the highest go
// line among the modules it builds with), and that the README says which that is.
func TestGoVersionIsDependenciesFloor(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "list", "-m", "-json", "all").Output()
	if err != nil {
		t.Fatalf("go list -m all: %v", err)
	}
	var ours, floor, floorBy string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var m struct {
			Path      string
			Main      bool
			GoVersion string
		}
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		switch {
		case m.Main:
			ours = m.GoVersion
		case m.GoVersion != "" && version.Compare("go"+m.GoVersion, "go"+floor) > 0:
			floor, floorBy = m.GoVersion, m.Path
		}
	}
	if ours != floor {
		t.Errorf("go.mod asks for go %s; the dependencies allow go %s (%s asks for it): go mod edit -go=%s",
			ours, floor, floorBy, floor)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := "Go " + ours + " or later"; !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not say %q", want)
	}
}
