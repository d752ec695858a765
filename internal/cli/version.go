package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is the version a release build stamps into the binary: `make dist VERSION=v1.2.3`
// links with -ldflags "-X github.com/letterbox-dev/letterbox/internal/cli.Version=v1.2.3".
// Empty, the version comes from the build information: the module's version for `go install
// …@v1.2.3`, a pseudo-version naming the commit for a build in a checkout with VCS stamping.
var Version = ""

// buildVersion is what a binary knows of where it was built from.
type buildVersion struct {
	version  string // v1.2.3, a pseudo-version, or "devel" when nothing says
	revision string // the VCS commit, "" when the build was not stamped with it
	time     string // the commit's time, RFC 3339
	modified bool   // the checkout had uncommitted changes
	goVer    string // the Go toolchain
	platform string // GOOS/GOARCH
}

// readBuildVersion takes the version from stamped (Version) when set, else from bi, the
// binary's build information (nil when it has none).
func readBuildVersion(stamped string, bi *debug.BuildInfo) buildVersion {
	v := buildVersion{version: stamped, goVer: runtime.Version(), platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		if v.version == "" {
			v.version = "devel"
		}
		return v
	}
	if bi.GoVersion != "" {
		v.goVer = bi.GoVersion
	}
	// "(devel)" is what the toolchain records when it knows no version: a build with VCS
	// stamping off, or `go run`.
	if v.version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v.version = bi.Main.Version
	}
	if v.version == "" {
		v.version = "devel"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.revision = s.Value
		case "vcs.time":
			v.time = s.Value
		case "vcs.modified":
			v.modified = s.Value == "true"
		}
	}
	return v
}

// String is the line `letterbox version` prints: the version first, for scripts, then the
// commit (12 digits, as Go's pseudo-versions name it; "+dirty" when the checkout had
// uncommitted changes), its date and the toolchain.
func (v buildVersion) String() string {
	var details []string
	if v.revision != "" {
		rev := v.revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if v.modified {
			rev += "+dirty"
		}
		details = append(details, "commit "+rev)
	}
	if v.time != "" {
		details = append(details, v.time)
	}
	details = append(details, v.goVer+" "+v.platform)
	return fmt.Sprintf("letterbox %s (%s)", v.version, strings.Join(details, ", "))
}

// printVersion writes the version line of this binary.
func printVersion(w io.Writer) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	fmt.Fprintln(w, readBuildVersion(Version, bi))
}
