package userconfig

import (
	"path/filepath"
	"strings"
	"testing"
)

// tls_cert_file and tls_key_file: both or neither, ~ expanded.
func TestClientCertKeys(t *testing.T) {
	t.Parallel()
	cfg, err := Parse("c.toml", []byte(`
[[context]]
name = "mtls"
service_url = "pulsar+ssl://pulsar.example:6651"
admin_url = "https://pulsar.example:8443"
tls_ca_file = "/etc/ca.pem"
tls_cert_file = "~/.config/letterbox/client-cert.pem"
tls_key_file = "/etc/letterbox/client-key.pem"
`), env(map[string]string{"HOME": "/home/u"}))
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Contexts[0]
	if c.TLSCertFile != filepath.Join("/home/u", ".config/letterbox/client-cert.pem") || c.TLSKeyFile != "/etc/letterbox/client-key.pem" {
		t.Errorf("mtls: %q %q", c.TLSCertFile, c.TLSKeyFile)
	}
	ctx := func(extra string) string {
		return "[[context]]\nname = \"p\"\nservice_url = \"pulsar://h:6650\"\nadmin_url = \"http://h:8080\"\n" + extra
	}
	for _, tt := range []struct{ name, text, want string }{
		{"cert alone", ctx("tls_cert_file = \"/c.pem\"\n"), `c.toml:5: context "p": tls_cert_file needs tls_key_file`},
		{"key alone", ctx("tls_key_file = \"/k.pem\"\n"), `c.toml:5: context "p": tls_key_file needs tls_cert_file`},
		{"~user", ctx("tls_cert_file = \"~bob/c.pem\"\ntls_key_file = \"/k.pem\"\n"), `c.toml:5: context "p": tls_cert_file: "~bob/c.pem": only ~/`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("c.toml", []byte(tt.text), env(map[string]string{"HOME": "/h"}))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
