package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/letterbox-dev/letterbox/internal/brokertest"
	"github.com/letterbox-dev/letterbox/pulsartest"
)

// bashCompletion loads `letterbox completion bash` into a bash and completes lines there as
// bash would when tab is pressed, with the real binary answering.
type bashCompletion struct {
	t          *testing.T
	script     string   // the completion script's file
	env        []string // the environment bash runs in
	configHome string   // its XDG_CONFIG_HOME
}

func newBashCompletion(t *testing.T) *bashCompletion {
	t.Helper()
	bin := letterbox(t)
	if _, err := exec.LookPath("bash"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("bash is not installed (%v), and CI is set: the completion script cannot be tested", err)
		}
		t.Skipf("no bash to complete in: %v", err)
	}
	out, err := exec.Command(bin, "completion", "bash").Output()
	if err != nil {
		t.Fatalf("letterbox completion bash: %v", err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "letterbox.bash")
	if err := os.WriteFile(script, out, 0o600); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	configHome := filepath.Join(home, "config")
	env := []string{
		"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home, "XDG_CONFIG_HOME=" + configHome,
		"XDG_STATE_HOME=" + filepath.Join(home, "state"), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
	}
	return &bashCompletion{t: t, script: script, env: env, configHome: configHome}
}

// run runs bash code after loading the script, and returns its stdout.
func (b *bashCompletion) run(code string, env ...string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-c", "source "+shellQuote(b.script)+"\n"+code)
	cmd.Env = append(slices.Clone(b.env), env...)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		b.t.Fatalf("bash: %v\n%s", err, stderr)
	}
	return string(out)
}

// complete completes line, the cursor at its end, and returns COMPREPLY.
func (b *bashCompletion) complete(line string, env ...string) []string {
	b.t.Helper()
	// COMP_WORDBREAKS as an interactive bash has it, which bash -c may not set.
	out := b.run(fmt.Sprintf(`COMP_WORDBREAKS=$' \t\n"\'><=;|&(:'
COMP_LINE=%s
COMP_POINT=${#COMP_LINE}
_letterbox
printf '%%s\n' "${COMPREPLY[@]}"`, shellQuote(line)), env...)
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" {
			got = append(got, l)
		}
	}
	return got
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func TestBashCompletion(t *testing.T) {
	t.Parallel()
	b := newBashCompletion(t)
	if got := strings.TrimSpace(b.run("complete -p letterbox")); got != "complete -F _letterbox letterbox" {
		t.Errorf("complete -p letterbox: %q", got)
	}

	env := pulsartest.Start(t)
	ctx := brokertest.Ctx(t, 30*time.Second)
	for _, topic := range []string{"orders", "orders-billing-DLQ"} {
		if err := env.Admin().CreateTopic(ctx, "persistent://public/default/"+topic, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	configDir := filepath.Join(b.configHome, "letterbox")
	if err := os.MkdirAll(configDir, 0o700); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf("[[context]]\nname = \"test\"\nservice_url = %q\nadmin_url = %q\n", env.ServiceURL(), env.AdminURL())
	if err := os.WriteFile(filepath.Join(configDir, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, tt := range []struct {
		line string
		want []string
	}{
		{"letterbox dl", []string{"dlq"}},
		{"letterbox dlq ", []string{"ls", "stats", "causes", "export", "discard", "purge", "resend", "subscribe"}},
		{"letterbox dlq export --for", []string{"--format"}},
		{"letterbox dlq export --format ", []string{"jsonl", "csv"}},
		// bash replaces what follows the "=": the candidates are what goes there.
		{"letterbox dlq export --payload=ba", []string{"base64"}},
		{"letterbox --context ", []string{"test"}},
		{"letterbox --context test dlq stats ", []string{"orders-billing-DLQ"}},
		{"letterbox --admin-url " + env.AdminURL() + " replay --to ord", []string{"orders", "orders-billing-DLQ"}},
		// ... and what follows the last ":".
		{"letterbox --admin-url " + env.AdminURL() + " replay --to persistent://public/default/orders-",
			[]string{"//public/default/orders-billing-DLQ"}},
	} {
		if got := b.complete(tt.line); !slices.Equal(got, tt.want) {
			t.Errorf("%q: %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestBashCompletionSilentCluster checks that completing a name from a cluster that accepts
// connections and never answers ends, once the configured timeout has passed, with nothing.
func TestBashCompletionSilentCluster(t *testing.T) {
	t.Parallel()
	b := newBashCompletion(t)
	silent := brokertest.SilentListener(t)
	for _, line := range []string{
		"letterbox --admin-url http://" + silent + " dlq stats ",
		"letterbox --admin-url http://" + silent + " replay --to ",
	} {
		if got := b.complete(line, "LETTERBOX_COMPLETION_TIMEOUT=300ms"); len(got) != 0 {
			t.Errorf("%q: %q from a cluster that never answered", line, got)
		}
	}
}

// shellFor returns the path of shell, skipping the test where it is not installed, except in
// CI (CI set), where .ci/run installs it and its absence fails the test.
func shellFor(t *testing.T, shell string) string {
	t.Helper()
	path, err := exec.LookPath(shell)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (%v), and CI is set: its completion script cannot be tested; install %s (.ci/run does)", shell, err, shell)
		}
		t.Skipf("%s is not installed: %v", shell, err)
	}
	return path
}

// completionScript writes `letterbox completion SHELL` into a file and returns it, with the
// environment the shell runs in: PATH finding the binary first, HOME and XDG_* in the test's
// directory.
func completionScript(t *testing.T, shell string) (script string, env []string) {
	t.Helper()
	bin := letterbox(t)
	out, err := exec.Command(bin, "completion", shell).Output()
	if err != nil {
		t.Fatalf("letterbox completion %s: %v", shell, err)
	}
	script = filepath.Join(t.TempDir(), "letterbox."+shell)
	if err := os.WriteFile(script, out, 0o600); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	return script, []string{
		"PATH=" + filepath.Dir(bin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_STATE_HOME=" + filepath.Join(home, "state"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
		"LETTERBOX_COMPLETION_TIMEOUT=0",
	}
}

func runShell(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	return string(out)
}

// TestFishCompletion completes with fish's own `complete -C`, which runs the script as a tab
// press does.
func TestFishCompletion(t *testing.T) {
	t.Parallel()
	fish := shellFor(t, "fish")
	script, env := completionScript(t, "fish")
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	var code strings.Builder
	code.WriteString("source " + shellQuote(script) + "\n")
	for _, line := range []string{"letterbox dlq ", "letterbox dlq export --format ", "letterbox dlq export --payload=b",
		"letterbox broker --data " + filepath.Join(dir, "da")} {
		fmt.Fprintf(&code, "complete -C%s\necho ---\n", shellQuote(line))
	}
	got := strings.Split(runShell(t, env, fish, "--no-config", "-c", code.String()), "---\n")
	want := []string{
		"causes\t.*\ndiscard\t.*\nexport\t.*\nls\t.*\npurge\t.*\nresend\t.*\nstats\t.*\nsubscribe\t.*\n",
		"csv\njsonl\n",
		"--payload=base64\n",
		regexp.QuoteMeta(filepath.Join(dir, "data")) + "/\tDirectory\n",
	}
	for i, w := range want {
		if i >= len(got) || !regexp.MustCompile("^"+w+"$").MatchString(got[i]) {
			t.Errorf("fish completion %d: got %q, want %q", i, got, w)
		}
	}
}

// TestZshCompletion runs the zsh script's function as the completion system would call it,
// with words and CURRENT set, the completion system's _describe and _files standing in to
// print what they are given. (Driving zsh's line editor itself takes a terminal.)
func TestZshCompletion(t *testing.T) {
	t.Parallel()
	zsh := shellFor(t, "zsh")
	script, env := completionScript(t, "zsh")
	code := `compdef() { print -r -- "compdef $*" }
_describe() { print -r -- "describe ${@[5,-1]}"; print -rl -- "${(@P)4}" }
_files() { print -r -- "files $*" }
source ` + shellQuote(script) + `
words=(letterbox dlq ""); CURRENT=3; _letterbox; print -r -- ---
words=(letterbox dlq export --format ""); CURRENT=5; _letterbox; print -r -- ---
words=(letterbox dlq export --payload=b); CURRENT=4; _letterbox; print -r -- ---
words=(letterbox broker --data ""); CURRENT=4; _letterbox; print -r -- ---
words=(letterbox --token-file=""); CURRENT=2; _letterbox; print -r -- ---
`
	got := runShell(t, env, zsh, "-f", "-c", code)
	want := "compdef _letterbox letterbox\n" +
		"describe \nls:list the DLQs.*\nstats:.*\ncauses:.*\nexport:.*\ndiscard:.*\npurge:.*\nresend:.*\nsubscribe:.*\n---\n" +
		"describe \njsonl\ncsv\n---\n" +
		"describe \n--payload=base64\n---\n" +
		"files -/\n---\n" +
		"files \n---\n"
	if !regexp.MustCompile("^" + want + "$").MatchString(got) {
		t.Errorf("zsh completion:\n%s\nwant (a regular expression):\n%s", got, want)
	}
}
