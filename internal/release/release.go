package main

import (
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// options are what a release run builds, and where.
type options struct {
	root    string   // the module's directory
	version string   // stamped into the binaries; "" takes Go's from the checkout
	out     string   // where the archives go
	targets []string // GOOS/GOARCH
	work    string   // where binaries are built; "" a temporary directory of its own
}

// versionVar is the variable -version sets (internal/cli's Version).
const versionVar = "github.com/letterbox-dev/letterbox/internal/cli.Version"

// extras are the files every archive carries beside the binary, from the module's directory.
var extras = []string{"LICENSE", "README.md"}

// earliest is the time of a release's files when nothing says when its commit was: the
// earliest time a zip can hold.
var earliest = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// versionRE is what a version may be: it goes into file names.
var versionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+_-]*$`)

// run builds every target and archives it, then writes SHA256SUMS.
func run(ctx context.Context, o options, progress func(string, ...any)) error {
	if o.version != "" && !versionRE.MatchString(o.version) {
		return usageErr{fmt.Errorf("-version %q: want letters, digits and . + _ -, as v1.2.3", o.version)}
	}
	if len(o.targets) == 0 {
		return usageErr{fmt.Errorf("no target")}
	}
	for _, t := range o.targets {
		if goos, goarch, ok := strings.Cut(t, "/"); !ok || goos == "" || goarch == "" {
			return usageErr{fmt.Errorf("target %q: want OS/ARCH, as linux/amd64", t)}
		}
	}
	mtime, err := sourceDate(ctx, o.root)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	if err := removeOld(o.out); err != nil {
		return err
	}
	work := o.work
	if work == "" {
		if work, err = os.MkdirTemp("", "letterbox-release-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}

	version := o.version
	var archives []string
	for _, t := range o.targets {
		goos, goarch, _ := strings.Cut(t, "/")
		progress("building %s", t)
		bin, err := build(ctx, o.root, work, goos, goarch, o.version)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		if version == "" {
			// The first binary says which version Go stamped; every target has the same.
			if version, err = stampedVersion(bin); err != nil {
				return err
			}
		}
		name := fmt.Sprintf("letterbox_%s_%s_%s", version, goos, goarch)
		files := []archived{{name: binaryName(goos), path: bin, mode: 0o755}}
		for _, e := range extras {
			files = append(files, archived{name: e, path: filepath.Join(o.root, e), mode: 0o644})
		}
		archive := name + ".tar.gz"
		if goos == "windows" {
			archive = name + ".zip"
		}
		progress("packing %s", archive)
		if err := pack(filepath.Join(o.out, archive), name, files, mtime); err != nil {
			return fmt.Errorf("%s: %w", archive, err)
		}
		archives = append(archives, archive)
	}
	return writeSums(o.out, archives)
}

func binaryName(goos string) string {
	if goos == "windows" {
		return "letterbox.exe"
	}
	return "letterbox"
}

// build builds the binary for goos/goarch into dir and returns its path.
func build(ctx context.Context, root, dir, goos, goarch, version string) (string, error) {
	bin := filepath.Join(dir, goos+"-"+goarch, binaryName(goos))
	// -s -w: no symbol table or debug information, as release binaries go; -buildvcs=true
	// says it even where GOFLAGS turns stamping off.
	ldflags := "-s -w"
	if version != "" {
		ldflags += " -X " + versionVar + "=" + version
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=true", "-ldflags", ldflags, "-o", bin, ".")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	return bin, nil
}

// stampedVersion is the main module's version in bin's build information: a tag, or a
// pseudo-version naming the commit; "devel" when the build stamped none (a checkout Go does
// not stamp, such as a git worktree).
func stampedVersion(bin string) (string, error) {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "", fmt.Errorf("reading the build information of %s: %w", bin, err)
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v, nil
	}
	return "devel", nil
}

// sourceDate is the time the archives' files get: SOURCE_DATE_EPOCH, else the commit's, else
// earliest.
func sourceDate(ctx context.Context, root string) (time.Time, error) {
	if v := os.Getenv("SOURCE_DATE_EPOCH"); v != "" {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return time.Time{}, usageErr{fmt.Errorf("SOURCE_DATE_EPOCH %q: want seconds since 1970", v)}
		}
		return later(time.Unix(secs, 0).UTC()), nil
	}
	cmd := exec.CommandContext(ctx, "git", "log", "-1", "--format=%ct")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return earliest, nil // not a checkout: the fixed time keeps runs alike
	}
	secs, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return earliest, nil
	}
	return later(time.Unix(secs, 0).UTC()), nil
}

func later(t time.Time) time.Time {
	if t.Before(earliest) {
		return earliest
	}
	return t
}

// removeOld removes what an earlier run left in dir: its archives and SHA256SUMS.
func removeOld(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		if n == "SHA256SUMS" || strings.HasPrefix(n, "letterbox_") && (strings.HasSuffix(n, ".tar.gz") || strings.HasSuffix(n, ".zip")) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeSums writes SHA256SUMS for the archives in dir, sorted by name, as sha256sum writes
// them ("HASH  NAME").
func writeSums(dir string, archives []string) error {
	archives = slices.Sorted(slices.Values(archives))
	var b strings.Builder
	for _, a := range archives {
		f, err := os.Open(filepath.Join(dir, a))
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), a)
	}
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()), 0o644)
}
