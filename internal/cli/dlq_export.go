package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/dlqops"
)

// exportFlags are the flags of "letterbox dlq export".
type exportFlags struct {
	subscription            string
	filters                 filterList
	includeAcked            bool
	format, output, payload string
}

func (f *exportFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.subscription, "subscription", "", "export the letters subscription `S` has not acknowledged (default: the DLQ's main subscription)")
	fs.Var(&f.filters, "filter", filterHelp)
	fs.BoolVar(&f.includeAcked, "include-acknowledged", false, "export the letters the subscription acknowledged too, while the DLQ retains them (marked acknowledged)")
	fs.StringVar(&f.format, "format", "jsonl", "write `jsonl|csv`: one JSON object a line, or CSV with a header row")
	fs.StringVar(&f.output, "output", "", "write to `FILE` (created, or replaced once the export is complete) instead of stdout")
	fs.StringVar(&f.payload, "payload", payloadAuto, "write payloads as `text|base64|auto` (auto: text when valid UTF-8, else base64)")
}

var dlqExport = dlqSub{cmd: "letterbox dlq export", flags: []string{"subscription", "filter", "include-acknowledged", "format", "output", "payload"},
	usage: `Usage: letterbox dlq export DLQ [--subscription S] [--filter EXPR]... [--include-acknowledged]
                            [--format jsonl|csv] [--output FILE] [--payload text|base64|auto]
                            [client flags]

Writes the letters of DLQ the filters select that its subscription has not acknowledged, up to
the last one the DLQ held when the command started, in the order stored; nothing is consumed.
The subscription is --subscription, else the DLQ's main one (as dlq stats chooses it); a DLQ
without one has every retained letter written. --include-acknowledged writes the letters the
subscription acknowledged too, while they are retained. Each letter: id, key, ordering_key,
publish_time and event_time (RFC 3339, UTC, milliseconds; event_time "" when unset),
producer_name, properties (a JSON object; in CSV a JSON-encoded column), payload_encoding
("text" or "base64") and payload, then what the properties say: origin,
origin_subscription, origin_message_id, reason and reconsume_times (null or empty when
absent), and acknowledged (true for a letter the subscription acknowledged). With the default
--payload auto, decoding gives back the exact payload.

Flags:
`}

func runDLQExport(ctx context.Context, cf *clientFlags, _ stdin, args []string, stdout, stderr io.Writer) int {
	var f exportFlags
	pos, code, ok := dlqExport.parse(cf, args, f.register, stdout, stderr)
	if !ok {
		return code
	}
	if code := oneDLQ(dlqExport.cmd, pos, stderr); code != ExitOK {
		return code
	}
	if !slices.Contains([]string{"jsonl", "csv"}, f.format) {
		return usageError(stderr, dlqExport.cmd, fmt.Errorf("--format %q: want jsonl or csv", f.format))
	}
	if !slices.Contains([]string{payloadAuto, payloadText, payloadBase64}, f.payload) {
		return usageError(stderr, dlqExport.cmd, fmt.Errorf("--payload %q: want text, base64 or auto", f.payload))
	}
	filter, err := parseFilters(f.filters, time.Now())
	if err != nil {
		return filterError(stderr, dlqExport.cmd, err)
	}
	fail := func(err error) int {
		printError(stderr, dlqExport.cmd, err)
		return ExitFailure
	}
	ad, cl, topic, code := openDLQ(ctx, cf, dlqExport.cmd, pos[0], stderr)
	if code != ExitOK {
		return code
	}
	defer cl.Close()

	out := &exportOutput{w: stdout}
	if f.output != "" {
		if out, err = createOutput(f.output); err != nil {
			return fail(err)
		}
		defer out.discard()
	}
	buf := bufio.NewWriterSize(out.w, 256<<10)
	lw, err := newLetterWriter(f.format, buf)
	if err != nil {
		return fail(err)
	}
	sub, code := readSubscription(ctx, ad, dlqExport.cmd, topic, f.subscription, f.includeAcked, stderr)
	if code != ExitOK {
		return code
	}
	var n int64
	opts := dlqops.ScanOptions{Topic: topic, Subscription: sub, IncludeAcknowledged: f.includeAcked, Filter: filter,
		NoIndex: true, Admin: ad, Names: deadletter.NewPropertyNames(filter.Properties()),
		Visit: func(m *client.Message, l *deadletter.Letter, acked bool) error {
			n++
			return lw.write(newLetterRecord(m, l, acked, f.payload))
		}}
	// A bar redrawn on a terminal that also shows the letters would tear them apart.
	if f.output != "" || !isTerminal(stdout) {
		opts.Progress = scanProgress(stderr)
	}
	res, err := dlqops.Scan(ctx, cl, opts)
	warnUnseen(stderr, dlqExport.cmd, opts.Names)
	if err == nil {
		err = lw.flush()
	}
	if err == nil {
		err = buf.Flush()
	}
	if err != nil {
		if f.output != "" {
			// The file was never put in place: what an interrupted export would leave there
			// is easy to take for the whole DLQ.
			fmt.Fprintf(stderr, "%s: %s not written\n", dlqExport.cmd, f.output)
		}
		return scanFailed(ctx, stderr, dlqExport.cmd, topic, err)
	}
	if f.output != "" {
		if err := out.commit(); err != nil {
			return fail(err)
		}
		fmt.Fprintf(stderr, "%s: %d letters written to %s\n", dlqExport.cmd, n, out.path)
	}
	if res.Approx != "" {
		fmt.Fprintf(stderr, "%s: ≈ %s\n", dlqExport.cmd, res.Approx)
	}
	return ExitOK
}

// exportOutput is where an export goes: stdout, or a file written under a temporary name
// next to it and renamed into place once complete.
type exportOutput struct {
	w    io.Writer
	path string   // the absolute path of the file; "" for stdout
	tmp  *os.File // the file being written
}

func createOutput(name string) (*exportOutput, error) {
	path, err := filepath.Abs(name)
	if err != nil {
		return nil, fmt.Errorf("--output %s: %w", name, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("--output %s: %w", name, err)
	}
	// CreateTemp makes the file private, and the letters are the cluster's: it stays so, unless
	// it replaces a file whose mode the user chose.
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode().Perm()
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("--output %s: %w", name, err)
	}
	return &exportOutput{w: tmp, path: path, tmp: tmp}, nil
}

// commit puts the complete file in place.
func (o *exportOutput) commit() error {
	err := o.tmp.Sync()
	if cerr := o.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(o.tmp.Name(), o.path)
	}
	if err != nil {
		os.Remove(o.tmp.Name())
		return fmt.Errorf("--output %s: %w", o.path, err)
	}
	o.tmp = nil
	return nil
}

// discard removes the temporary file unless commit put it in place.
func (o *exportOutput) discard() {
	if o.tmp == nil {
		return
	}
	o.tmp.Close()
	os.Remove(o.tmp.Name())
}
