package userconfig

import (
	"slices"
	"strings"
	"testing"
)

// trusted_hosts: each a form the admin client takes, a mistake reported with its line.
func TestTrustedHostsKey(t *testing.T) {
	t.Parallel()
	cfg, err := Parse("c.toml", []byte(`
[[context]]
name = "prod"
service_url = "pulsar+ssl://pulsar.example:6651"
admin_url = "https://pulsar.example:8443"
trusted_hosts = ["*.pulsar.internal", "broker-7.example:8443", " 10.0.0.7 "]
`), env(map[string]string{"HOME": "/home/u"}))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cfg.Contexts[0].TrustedHosts, []string{"*.pulsar.internal", "broker-7.example:8443", "10.0.0.7"}; !slices.Equal(got, want) {
		t.Errorf("trusted hosts %q, want %q", got, want)
	}
	_, err = Parse("c.toml", []byte("[[context]]\nname = \"p\"\nservice_url = \"pulsar://h:6650\"\nadmin_url = \"http://h:8080\"\ntrusted_hosts = [\"a.example\", \"http://\"]\n"), env(nil))
	if want := `c.toml:5: context "p": trusted_hosts: "http://": want host, host:port or *.domain`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want it to contain %q", err, want)
	}
}
