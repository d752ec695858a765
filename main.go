// Command letterbox is a terminal UI for Apache Pulsar dead-letter and retry flows, with an
// embedded Pulsar-compatible broker. The command line lives in internal/cli; main only hands it
// the process.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/letterbox-dev/letterbox/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, restore the default handling: a second one ends the process at
	// once, should shutting down hang.
	go func() {
		<-ctx.Done()
		stop()
	}()
	p := cli.Process{SetProcs: func(n int) { runtime.GOMAXPROCS(n) }, Stdin: os.Stdin, StdinTerminal: cli.IsTerminal(os.Stdin)}
	code := cli.RunProcess(ctx, p, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
