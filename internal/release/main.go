// Command release builds letterbox's release archives (make dist):
//
//	go run ./internal/release [-version v1.2.3] [-out dist] [-targets linux/amd64,...]
//
// For each target it builds the binary with -trimpath and -buildvcs=true, the version stamped
// into it when -version is given (else it is the one Go stamps from the checkout, and names the
// archives), and packs it with README.md and LICENSE: a .tar.gz for linux and darwin, a .zip
// for windows, each holding one directory, letterbox_VERSION_OS_ARCH. SHA256SUMS lists the
// archives as sha256sum writes them.
//
// Two runs on the same commit with the same Go toolchain give the same bytes: the files go
// into an archive in a fixed order, owned by no one, with fixed modes and one time, the
// commit's (SOURCE_DATE_EPOCH when set, as reproducible-builds.org has it; else `git log`; else
// 1980-01-01, the earliest a zip can say), and gzip writes neither a name nor a time.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
)

// DefaultTargets are the platforms a release is built for.
var defaultTargets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "stamp `VERSION` into the binaries and name the archives with it (default: the version Go stamps from the checkout)")
	flag.StringVar(&o.out, "out", "dist", "write the archives and SHA256SUMS into `DIR` (created; emptied of earlier archives)")
	targets := flag.String("targets", strings.Join(defaultTargets, ","), "comma-separated `OS/ARCH` targets")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "release: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	for t := range strings.SplitSeq(*targets, ",") {
		if t = strings.TrimSpace(t); t != "" {
			o.targets = append(o.targets, t)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	root, err := os.Getwd()
	if err == nil {
		o.root = root
		err = run(ctx, o, func(format string, a ...any) { fmt.Fprintf(os.Stderr, "release: "+format+"\n", a...) })
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		var ue usageErr
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageErr is a mistake of the command line.
type usageErr struct{ error }
