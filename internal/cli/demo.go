package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/letterbox-dev/letterbox/broker"
	"github.com/letterbox-dev/letterbox/internal/demo"
	"github.com/letterbox-dev/letterbox/tui/data"
)

const demoUsageText = `Usage: letterbox demo [--theme NAME] [--memory-limit SIZE]

An embedded broker with temporary data (in memory, gone on exit), a demo workload in the
namespace ` + demo.DefaultNamespace + ` (deduplication on) and the TUI on it. The broker listens on
127.0.0.1:6650 and 127.0.0.1:8080 when they are free, else on free ports; the header shows
where. Applications can connect to it meanwhile. Logs go to $XDG_STATE_HOME/letterbox/letterbox.log.

The workload: checkout publishes JSON orders; billing (two Shared consumers, retry and DLQ
with the initial subscription billing-audit) fails about one order in six with a reason
property, some for good; an AUTO_CONSUME auditor reads orders too; payments-gateway publishes
Avro payments to a 3-partition topic read by a Key_Shared group of three; warehouse publishes
string shipment notices, whose damaged parcels fulfilment negatively acknowledges into
shipments-fulfilment-DLQ.

Flags:
`

// runDemo is `letterbox demo`.
func runDemo(ctx context.Context, args []string, tf *tuiFlags, stdout, stderr io.Writer) int {
	const name = "letterbox demo"
	fs := newFlagSet(name)
	var f tuiFlags
	f.memory = tf.memory // letterbox --memory-limit SIZE demo
	f.registerDefault(fs, tf.theme)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, demoUsageText)
			printFlags(stdout, fs, tuiFlagNames)
			return ExitOK
		}
		return usageError(stderr, name, err)
	}
	if fs.NArg() > 0 {
		return usageError(stderr, name, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if err := f.check(); err != nil {
		return usageError(stderr, name, err)
	}
	log, closeLog, err := openLog()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
	defer closeLog()

	// The demo's services retry after 1 and 2 s. By upstream's default a delayed message due
	// within a tick (1 s) goes at once, so its retries would not wait at all: its broker holds
	// them until their time.
	strictDelays := func(c *broker.Config) { c.DelayedDeliveryDeliverAtTimeStrict = true }
	eb, err := startEmbedded(nil, true, f.memory.limit(), log, strictDelays) // nil: an in-memory store
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
	defer eb.close(log)
	log.Info("demo broker", "pulsar", eb.serviceURL, "http", eb.adminURL)

	// The workload's admin requests and the TUI's are letterbox's own: q asks only over others.
	self := &selfConns{}
	w, err := demo.New(demo.Options{ServiceURL: eb.serviceURL, AdminURL: eb.adminURL, Logger: log, HTTPClient: self.httpClient()})
	if err == nil {
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		err = w.Start(sctx)
		cancel()
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
	defer w.Stop()
	// The demo's broker lives as long as the demo: its history is its own, not that of
	// whatever listened on the same port before.
	cluster := "demo:" + time.Now().UTC().Format(time.RFC3339Nano)
	opts := data.AdminOptions{AdminURL: eb.adminURL, ServiceURL: eb.serviceURL, Cluster: cluster, HTTPClient: self.httpClient()}
	// config.toml's contexts are there to switch to (and back with :context -), and its
	// export_dir holds; a broken file only turns :context off.
	cfg, cfgErr := loadConfig()
	if cfgErr != nil {
		log.Warn("configuration file: :context is off", "err", cfgErr)
	}
	app := appSetup{theme: f.theme, contexts: tuiContexts(cfg, cfgErr, nil, opts, log), broker: eb, self: self, demo: w}
	if cfg != nil {
		app.exportDir = cfg.ExportDir
	}
	return runApp(ctx, opts, app, log, stderr)
}
