package cli

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/broker/auth"
)

// `letterbox token`: the token tools of upstream's `pulsar tokens`, for local setups.
//
//	letterbox token secret-key --output FILE [--base64]
//	letterbox token create --secret-key KEY --subject ROLE [--expiry 1h]
//
// KEY takes the forms the broker's tokenSecretKey takes: file:///path, data:;base64,..., or a
// path. The token is printed on stdout and nowhere else; the key is never printed.

const tokenUsageText = `Usage:
  letterbox token secret-key --output FILE [--base64]
      Writes a random HS256 secret key (raw bytes, or base64 text with --base64) to FILE, which
      must not exist yet. Start the broker with --token-secret-key FILE.
  letterbox token create --secret-key KEY --subject ROLE [--expiry DURATION]
      Prints a token for ROLE signed with KEY (file:///path, data:;base64,..., or a path).
      DURATION: 90s, 30m, 1h, 7d, 2w, 1y... (default: the token never expires).
`

// tokenCommands are the subcommands of `letterbox token`.
func tokenCommands() []command {
	return []command{
		{name: "secret-key", summary: "write a random HS256 secret key to a file", flags: new(secretKeyFlags).register,
			run: func(_ context.Context, in invocation, args []string) int {
				return runTokenSecretKey(args, in.stdout, in.stderr)
			}},
		{name: "create", summary: "print a token for a role, signed with a secret key", flags: new(createTokenFlags).register,
			run: func(_ context.Context, in invocation, args []string) int {
				return runTokenCreate(args, in.stdout, in.stderr)
			}},
	}
}

func runToken(args []string, stdout, stderr io.Writer) int {
	const name = "letterbox token"
	if len(args) == 0 {
		return usageError(stderr, name, errors.New("want a subcommand: secret-key or create"))
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		io.WriteString(stdout, tokenUsageText)
		return ExitOK
	}
	sub, ok := findCommand(tokenCommands(), args[0])
	if !ok {
		return usageError(stderr, name, fmt.Errorf("unknown subcommand %q: want secret-key or create", args[0]))
	}
	return sub.run(context.Background(), invocation{stdout: stdout, stderr: stderr}, args[1:])
}

// secretKeyFlags are the flags of `letterbox token secret-key`.
type secretKeyFlags struct {
	output string
	base64 bool
}

func (f *secretKeyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.output, "output", "", "write the key to `FILE`")
	fs.BoolVar(&f.base64, "base64", false, "write the key as base64 text")
}

// createTokenFlags are the flags of `letterbox token create`.
type createTokenFlags struct {
	secretKey, subject, expiry string
}

func (f *createTokenFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.secretKey, "secret-key", "", "sign with the HS256 `KEY` (file:///path, data:;base64,..., or a path)")
	fs.StringVar(&f.subject, "subject", "", "the token's `ROLE` (its sub claim)")
	fs.StringVar(&f.expiry, "expiry", "", "expire after `DURATION` (90s, 30m, 1h, 7d, 2w, 1y); default never")
}

func parseTokenFlags(name string, fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, tokenUsageText)
			return ExitOK, false
		}
		return usageError(stderr, name, err), false
	}
	if fs.NArg() > 0 {
		return usageError(stderr, name, fmt.Errorf("unexpected argument %q", fs.Arg(0))), false
	}
	return 0, true
}

func runTokenSecretKey(args []string, stdout, stderr io.Writer) int {
	const name = "letterbox token secret-key"
	fs := newFlagSet(name)
	var kf secretKeyFlags
	kf.register(fs)
	if code, ok := parseTokenFlags(name, fs, args, stdout, stderr); !ok {
		return code
	}
	if kf.output == "" {
		return usageError(stderr, name, errors.New("--output FILE is required (a key is not printed)"))
	}
	key, err := auth.NewSecretKey()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
	if kf.base64 {
		key = []byte(base64.StdEncoding.EncodeToString(key))
	}
	// O_EXCL: overwriting a key would silently invalidate every token signed with it.
	f, err := os.OpenFile(kf.output, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
	if _, err := f.Write(key); err != nil {
		f.Close()
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
	if err := f.Close(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitFailure
	}
	return ExitOK
}

func runTokenCreate(args []string, stdout, stderr io.Writer) int {
	const name = "letterbox token create"
	fs := newFlagSet(name)
	var f createTokenFlags
	f.register(fs)
	if code, ok := parseTokenFlags(name, fs, args, stdout, stderr); !ok {
		return code
	}
	switch {
	case f.secretKey == "":
		return usageError(stderr, name, errors.New("--secret-key KEY is required"))
	case f.subject == "":
		return usageError(stderr, name, errors.New("--subject ROLE is required"))
	}
	var ttl time.Duration
	if f.expiry != "" {
		var err error
		if ttl, err = parseExpiry(f.expiry); err != nil {
			return usageError(stderr, name, err)
		}
	}
	key, err := auth.LoadKey(f.secretKey)
	if err != nil {
		fmt.Fprintf(stderr, "%s: --secret-key: %v\n", name, err)
		return ExitUsage
	}
	tok, err := auth.CreateToken(key, f.subject, ttl, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return ExitUsage
	}
	fmt.Fprintln(stdout, tok)
	return ExitOK
}

// parseExpiry reads a Go duration (90s, 1h30m) or upstream's relative times with d, w and y.
func parseExpiry(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		units := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour, 'y': 365 * 24 * time.Hour}
		unit, ok := units[s[len(s)-1]]
		n, nerr := strconv.ParseInt(strings.TrimSpace(s[:len(s)-1]), 10, 64)
		if !ok || nerr != nil || n > int64((100*365*24*time.Hour)/unit) {
			return 0, fmt.Errorf("--expiry %q: want a duration such as 90s, 30m, 1h, 7d, 2w or 1y", s)
		}
		d = time.Duration(n) * unit
	}
	if d <= 0 {
		return 0, fmt.Errorf("--expiry %q: must be positive", s)
	}
	return d, nil
}
