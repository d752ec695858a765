package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Credentials in a URL's user-info are refused, naming the flag (or the context's key) that
// carries them, and the password is never printed: letterbox prints its URLs (the history,
// the log, the TUI's header), so it would end up there.
func TestCredentialsInURLRefused(t *testing.T) {
	const secret = "s3cret"
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--admin-url", "http://alice:" + secret + "@127.0.0.1:8080"}, "--admin-url"},
		{[]string{"--admin-url", "http://alice:" + secret + "@127.0.0.1:bad"}, "--admin-url"},
		{[]string{"replay", "--dlq", "d", "--admin-url", "https://alice:" + secret + "@127.0.0.1:8443"}, "--admin-url"},
		{[]string{"replay", "--dlq", "d", "--service-url", "pulsar://alice:" + secret + "@127.0.0.1:6650"}, "--service-url"},
		{[]string{"dlq", "ls", "--admin-url", "http://alice:" + secret + "@127.0.0.1:8080"}, "--admin-url"},
		{[]string{"dlq", "stats", "d", "--service-url", "pulsar+ssl://:" + secret + "@127.0.0.1:6651"}, "--service-url"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var out, errOut strings.Builder
		code := Run(ctx, tc.args, &out, &errOut)
		cancel()
		if code != ExitUsage || !strings.Contains(errOut.String(), tc.flag) || strings.Contains(out.String()+errOut.String(), secret) {
			t.Errorf("%q: exit %d, stderr %q; want %d naming %s, without the password", tc.args, code, errOut.String(), ExitUsage, tc.flag)
		}
	}
	if !strings.Contains(errText(checkURL("admin-url", "http://alice:"+secret+"@h:8080", "http", "https")), "no credentials in the URL") {
		t.Error("checkURL does not say why")
	}
}

// A context's URL with credentials stops --context at its line, without the password.
func TestContextCredentialsInURLRefused(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	if err := os.MkdirAll(filepath.Join(dir, "letterbox"), 0o700); err != nil {
		t.Fatal(err)
	}
	conf := "[[context]]\nname = \"prod\"\nservice_url = \"pulsar://h:6650\"\nadmin_url = \"http://alice:s3cret@h:8080\"\n"
	if err := os.WriteFile(filepath.Join(dir, "letterbox", "config.toml"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	code := Run(context.Background(), []string{"replay", "--context", "prod", "--dlq", "d"}, &out, &errOut)
	if code != ExitUsage || !strings.Contains(errOut.String(), "admin_url") || strings.Contains(errOut.String(), "s3cret") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}
