package userconfig

import (
	"fmt"
	"strings"
)

// parseClientCert reads a context's tls_cert_file and tls_key_file into ctx: both or neither,
// with ~ expanded. The files are read by the command line when it uses the context.
func parseClientCert(ctx *Context, fc fileContext, getenv func(string) string) error {
	at := ctx.Pos
	label := fmt.Sprintf("context %q", ctx.Name)
	cert, key := strings.TrimSpace(fc.TLSCertFile), strings.TrimSpace(fc.TLSKeyFile)
	switch {
	case cert != "" && key == "":
		return fmt.Errorf("%s: %s: tls_cert_file needs tls_key_file", at("tls_cert_file"), label)
	case key != "" && cert == "":
		return fmt.Errorf("%s: %s: tls_key_file needs tls_cert_file", at("tls_key_file"), label)
	}
	var err error
	if ctx.TLSCertFile, err = expand(cert, getenv); err != nil {
		return fmt.Errorf("%s: %s: tls_cert_file: %v", at("tls_cert_file"), label, err)
	}
	if ctx.TLSKeyFile, err = expand(key, getenv); err != nil {
		return fmt.Errorf("%s: %s: tls_key_file: %v", at("tls_key_file"), label, err)
	}
	return nil
}
