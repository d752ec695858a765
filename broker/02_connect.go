package broker

import (
	"time"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// CONNECT → CONNECTED. With authentication off (the default) any auth method and data are accepted,
// as upstream does when authenticationEnabled=false; with it on, the credentials are checked first
// and a failure is answered ERROR and closes (auth_conn.go). The answered protocol version is the
// lower of the client's and ours (v21; v20 in upstream-compat mode). Nothing that needs
// AUTH_CHALLENGE is sent: the Go client fails a handshake whose first answer is not CONNECTED.
// proxy_to_broker_url matters only at a front end that plays a proxy (frontend.go).

const (
	protocolVersion       = int32(pb.ProtocolVersion_v21)
	protocolVersionCompat = int32(pb.ProtocolVersion_v20)
)

func (c *conn) handleConnect(cmd *pb.CommandConnect) error {
	if c.connected.Load() {
		return errProtocol("second CONNECT on a connected connection")
	}
	if err := c.authenticateConnect(cmd); err != nil {
		return err
	}
	ours := protocolVersion
	if c.b.cfg.CompatUpstream {
		ours = protocolVersionCompat
	}
	c.adoptProxiedFrontEnd(cmd.GetProxyToBrokerUrl()) // frontend.go
	c.clientVersion = cmd.GetClientVersion()
	c.protocolVersion = min(cmd.GetProtocolVersion(), ours)
	c.features = cmd.GetFeatureFlags()
	c.connectedSince = time.Now()
	c.connected.Store(true)
	c.log.Debug("connected", "client", c.clientVersion, "protocol", c.protocolVersion)

	c.send(&pb.BaseCommand{
		Type: pb.BaseCommand_CONNECTED.Enum(),
		Connected: &pb.CommandConnected{
			ServerVersion:   ptr("Pulsar Server " + Version),
			ProtocolVersion: ptr(c.protocolVersion),
			MaxMessageSize:  ptr(int32(c.b.cfg.MaxMessageSize)),
			FeatureFlags: &pb.FeatureFlags{
				// PIP-344: we honour metadata_auto_creation_enabled on PARTITIONED_METADATA.
				SupportsGetPartitionedMetadataWithoutAutoCreation: ptr(true),
			},
		},
	}, nil)
	return nil
}
