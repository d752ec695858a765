//go:build clustertest

package broker

import (
	"net"
	"strings"
	"sync/atomic"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Front ends and ownership: a test hook that lets one broker behave towards clients as the
// brokers of a multi-broker upstream cluster do (internal/clustertest). It is built only with
// the clustertest tag, which `make test` passes; the binary is built without it, and its
// broker's own listeners own every topic (frontend_single.go). Each front end is a
// binary-protocol listener with its own service URL; an Ownership says which front end owns
// each topic. The topics themselves stay one broker's, as an upstream cluster's brokers share
// BookKeeper and the metadata store: data, cursors and deduplication state survive a move.
//
// Without an Ownership (every test broker but the fixture's) the broker's own listener owns
// everything and nothing here changes what clients see.
//
// Towards clients, as upstream:
//   - LOOKUP at a front end that does not own the topic answers Redirect to the owner,
//     authoritative; a front end that is a proxy answers Connect naming the owner with
//     proxy_through_service_url, and a connection whose CONNECT names a front end in
//     proxy_to_broker_url is served as that front end's.
//   - PRODUCER and SUBSCRIBE at a front end that does not own the topic are refused with
//     ServiceNotReady, as upstream's "not served by this instance", which clients answer with a
//     new lookup.
//   - A move is an unload (unload.go) after the Ownership changed: the clients reconnect, are
//     refused at the old owner and redirected to the new one, which opens the topic from what
//     the unload stored.

// Ownership says which front end owns a topic.
type Ownership interface {
	// Owner returns the service URL (pulsar://host:port) of the front end that owns topic, the
	// full name of a non-partitioned topic or of one partition.
	Owner(topic string) string
}

// FrontEnd is one listener of a broker that plays one broker of a cluster.
type FrontEnd struct {
	// ServiceURL is what LOOKUP names the front end by: pulsar://host:port.
	ServiceURL string
	// Proxy makes the front end answer as a Pulsar proxy: it owns nothing, and its lookups
	// answer Connect with proxy_through_service_url.
	Proxy bool
}

// frontEnd is what a connection is served as; nil for the broker's own listeners.
type frontEnd = FrontEnd

// frontEnds is the broker's cluster state: the Ownership, and the front ends by host:port
// (guarded by Broker.mu).
type frontEnds struct {
	ownership atomic.Pointer[Ownership]
	byHost    map[string]FrontEnd
}

// SetOwnership installs o; from then on a front end serves only the topics o gives it.
func (b *Broker) SetOwnership(o Ownership) {
	if o == nil {
		b.fronts.ownership.Store(nil)
		return
	}
	b.fronts.ownership.Store(&o)
}

// Serve accepts connections on ln as front end fe until the broker closes, which closes ln.
// Call it before Close.
func (b *Broker) Serve(ln net.Listener, fe FrontEnd) {
	b.mu.Lock()
	if b.fronts.byHost == nil {
		b.fronts.byHost = make(map[string]FrontEnd)
	}
	b.fronts.byHost[hostPort(fe.ServiceURL)] = fe
	b.mu.Unlock()
	b.wg.Add(2)
	go func() {
		defer b.wg.Done()
		<-b.stop
		ln.Close()
	}()
	go b.acceptOn(ln, &fe)
}

// adoptProxiedFrontEnd serves c as the front end a proxied CONNECT names, when it names one.
// Called by the reader before the connection is marked connected.
func (c *conn) adoptProxiedFrontEnd(proxyTo string) {
	if proxyTo == "" || c.front == nil || !c.front.Proxy {
		return
	}
	c.b.mu.Lock()
	fe, ok := c.b.fronts.byHost[hostPort(proxyTo)]
	c.b.mu.Unlock()
	if ok {
		c.front = &fe
	}
}

// serviceURL is the service URL of the front end c is served as.
func (c *conn) serviceURL() string {
	if c.front != nil {
		return c.front.ServiceURL
	}
	return c.b.ServiceURL()
}

// tlsServiceURL is LOOKUP's broker_service_url_tls for c: none at a front end, which speaks
// plain TCP only.
func (c *conn) tlsServiceURL() *string {
	if c.front != nil {
		return nil
	}
	return c.b.tlsServiceURL()
}

// owner returns the service URL of topic's owner, "" when c's front end owns it (or nobody
// does: an Ownership that names no owner leaves the topic to every front end). It takes no
// lock, so it may be called under a topic's.
func (c *conn) owner(topic string) string {
	o := c.b.fronts.ownership.Load()
	if o == nil {
		return ""
	}
	owner := (*o).Owner(topic)
	if owner == c.serviceURL() {
		return ""
	}
	return owner
}

// owns reports whether c's front end owns topic.
func (c *conn) owns(topic string) bool { return c.owner(topic) == "" }

// notServed is PRODUCER's and SUBSCRIBE's refusal at a front end that does not own the topic,
// as upstream's ServiceUnitNotReadyException.
func (c *conn) notServed(name naming.Topic) *serverError {
	if c.owns(name.String()) {
		return nil
	}
	return errorf(pb.ServerError_ServiceNotReady, "Namespace bundle for topic (%s) not served by this instance. Please redo the lookup.", name)
}

// lookupElsewhere answers LOOKUP when c's front end does not own the topic; false when it does.
func (c *conn) lookupElsewhere(cmd *pb.CommandLookupTopic, name naming.Topic) bool {
	owner := c.owner(name.String())
	if owner == "" {
		return false
	}
	resp := &pb.CommandLookupTopicResponse{
		RequestId:        cmd.RequestId,
		Response:         pb.CommandLookupTopicResponse_Redirect.Enum(),
		BrokerServiceUrl: &owner,
		Authoritative:    ptr(true),
	}
	if c.front != nil && c.front.Proxy {
		resp.Response = pb.CommandLookupTopicResponse_Connect.Enum()
		resp.ProxyThroughServiceUrl = ptr(true)
	}
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_LOOKUP_RESPONSE.Enum(), LookupTopicResponse: resp}, nil)
	return true
}

// hostPort strips a service URL's scheme: proxy_to_broker_url carries host:port alone.
func hostPort(url string) string {
	if i := strings.Index(url, "://"); i >= 0 {
		return url[i+3:]
	}
	return url
}
