package broker

import (
	"crypto/tls"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/letterbox-dev/letterbox/broker/auth"
	"github.com/letterbox-dev/letterbox/client/wire"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Authentication on the binary protocol, as upstream's ServerCnx with its providers:
//
//   - CONNECT carries auth_method_name ("token" with the JWT in auth_data, "basic" with
//     user:password, "tls" with the role in the connection's client certificate). A method
//     with a provider must authenticate; any other method, none included, gets
//     anonymousUserRole when it is set. Anything else (bad credentials, a method without a
//     provider and no anonymous role, a proxy's original_principal: we have no proxy roles) is
//     answered ERROR{request_id: u64 max, AuthenticationError, "Failed to authenticate"} and the
//     connection is closed. No AUTH_CHALLENGE is ever sent during the handshake: the Go client
//     fails a handshake whose first answer is not CONNECTED.
//   - After CONNECTED, every refresh-check interval (upstream authenticationRefreshCheckSeconds)
//     a connection whose credentials have expired (tokens only) is sent AUTH_CHALLENGE if it
//     advertised supports_auth_refresh, and closed otherwise; a challenge still unanswered at
//     the next check closes it. The AUTH_RESPONSE must authenticate the same role, or the
//     connection is closed (without an ERROR: the writer may be mid-frame, and the client's
//     reconnect is judged by CONNECT again).

// authRefreshData is what upstream puts in the challenge: the client answers with fresh
// credentials whatever it says.
var authRefreshData = []byte("PulsarAuthRefresh")

// connAuth is a connection's authenticated identity. role and method are written before the
// connection is marked connected and never change; expires and challenged change on refresh.
type connAuth struct {
	role       string
	method     string
	expires    atomic.Int64 // unix nanos when the credentials expire; 0: never
	challenged atomic.Int64 // unix nanos an unanswered AUTH_CHALLENGE was sent; 0: none
}

// minChallengeWait is the least time a client has to answer AUTH_CHALLENGE, however short
// the refresh check: a busy client may take longer than one check interval.
const minChallengeWait = 5 * time.Second

// authenticateConnect checks CONNECT's credentials when authentication is on. On failure it
// has answered the client and returns the error that closes the connection.
func (c *conn) authenticateConnect(cmd *pb.CommandConnect) error {
	if c.b.sec.authn == nil {
		return nil // authentication off: any method and data, as upstream
	}
	var (
		pr        auth.Principal
		anonymous bool
		err       error
	)
	method := connectMethod(cmd)
	if cmd.OriginalPrincipal != nil || cmd.OriginalAuthData != nil {
		err = errors.New("original principal given, and no proxy role is configured")
	} else {
		pr, anonymous, err = c.b.sec.authn.Connect(c.credentials(method, cmd.GetAuthData()))
	}
	if err != nil {
		return c.refuseAuthentication(cmd.GetClientVersion(), err)
	}
	c.auth.role = pr.Role
	c.auth.method = method
	c.setExpiry(pr)
	c.log.Debug("authenticated", "role", pr.Role, "method", method, "anonymous", anonymous, "expires", pr.Expires)
	if !pr.Expires.IsZero() {
		c.wg.Add(1)
		go c.authRefreshLoop(c.b.sec.refreshCheck)
	}
	return nil
}

// connectMethod is CONNECT's method as upstream names it: auth_method_name, else the
// deprecated enum's name (none, ycav1, athens), else "none".
func connectMethod(cmd *pb.CommandConnect) string {
	switch {
	case cmd.AuthMethodName != nil:
		return cmd.GetAuthMethodName()
	case cmd.AuthMethod != nil:
		return strings.ToLower(strings.TrimPrefix(cmd.GetAuthMethod().String(), "AuthMethod"))
	}
	return "none"
}

// credentials are what this connection presents with method and data: on a TLS connection,
// the client certificate chain the handshake verified as well.
func (c *conn) credentials(method string, data []byte) auth.Credentials {
	cr := auth.Credentials{Method: method, Data: data}
	if tc, ok := c.nc.(*tls.Conn); ok {
		cr.Certs = tc.ConnectionState().PeerCertificates
	}
	return cr
}

func (c *conn) setExpiry(pr auth.Principal) {
	if pr.Expires.IsZero() {
		c.auth.expires.Store(0)
	} else {
		c.auth.expires.Store(pr.Expires.UnixNano())
	}
}

// refuseAuthentication answers a CONNECT's ERROR as upstream does and returns the error that
// closes the connection. The ERROR is written directly, not queued, so it reaches the client
// before the close; nothing else is in flight before CONNECTED. Only the reason is logged,
// never the credentials.
func (c *conn) refuseAuthentication(clientVersion string, reason error) error {
	c.log.Warn("authentication failed", "during", "CONNECT", "client", clientVersion, "reason", reason.Error())
	frame, err := wire.AppendCommand(nil, &pb.BaseCommand{
		Type: pb.BaseCommand_ERROR.Enum(),
		Error: &pb.CommandError{
			RequestId: ptr(uint64(math.MaxUint64)),
			Error:     pb.ServerError_AuthenticationError.Enum(),
			Message:   ptr("Failed to authenticate"),
		},
	}, nil)
	if err == nil {
		c.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
		c.nc.Write(frame)
	}
	return errProtocol("authentication failed")
}

// authRefreshLoop challenges expired credentials, as upstream's refreshAuthenticationCredentials.
func (c *conn) authRefreshLoop(every time.Duration) {
	defer c.wg.Done()
	defer c.b.recoverPanic("refreshing authentication", c) // panic.go
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
		}
		if !c.connected.Load() {
			continue
		}
		exp := c.auth.expires.Load()
		if exp == 0 || time.Now().UnixNano() < exp {
			continue
		}
		if !c.features.GetSupportsAuthRefresh() {
			c.close("authentication expired and the client cannot refresh it")
			return
		}
		if sent := c.auth.challenged.Load(); sent != 0 {
			if time.Since(time.Unix(0, sent)) >= max(every, minChallengeWait) {
				c.close("authentication expired and AUTH_CHALLENGE was not answered")
				return
			}
			continue
		}
		c.auth.challenged.Store(time.Now().UnixNano())
		c.log.Debug("credentials expired: AUTH_CHALLENGE")
		c.send(&pb.BaseCommand{
			Type: pb.BaseCommand_AUTH_CHALLENGE.Enum(),
			AuthChallenge: &pb.CommandAuthChallenge{
				ServerVersion:   ptr("Pulsar Server " + Version),
				Challenge:       &pb.AuthData{AuthMethodName: ptr(c.auth.method), AuthData: authRefreshData},
				ProtocolVersion: ptr(c.protocolVersion),
			},
		}, nil)
	}
}

// handleAuthResponse takes refreshed credentials. With authentication off nothing was
// challenged and the command is ignored, as before.
func (c *conn) handleAuthResponse(cmd *pb.CommandAuthResponse) error {
	if c.b.sec.authn == nil {
		return nil
	}
	resp := cmd.GetResponse()
	pr, err := c.b.sec.authn.Authenticate(c.credentials(resp.GetAuthMethodName(), resp.GetAuthData()))
	if err == nil && pr.Role != c.auth.role {
		err = errors.New("the refreshed credentials name another role")
	}
	if err != nil {
		// No ERROR here: unlike during CONNECT, the writer may be mid-frame. The client sees
		// the close, reconnects, and its credentials are judged again by CONNECT.
		c.log.Warn("authentication failed", "during", "AUTH_RESPONSE", "client", cmd.GetClientVersion(), "reason", err.Error())
		return errProtocol("authentication refresh failed")
	}
	c.setExpiry(pr)
	c.auth.challenged.Store(0)
	c.log.Debug("credentials refreshed")
	return nil
}
