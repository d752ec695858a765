//go:build !clustertest

package broker

import (
	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// A broker built without the clustertest tag (the binary) is one broker: its own listeners own
// every topic, LOOKUP answers with its own service URL, and PRODUCER and SUBSCRIBE are served
// here. The cluster fixture's front ends (frontend.go) exist only in test builds.

// frontEnd is what a connection is served as: always nil here.
type frontEnd struct{}

// frontEnds holds no state here: there is no Ownership to consult.
//
//lint:ignore U1000 the type of Broker.fronts, which only the clustertest build reads
type frontEnds struct{}

func (c *conn) adoptProxiedFrontEnd(string) {}

func (c *conn) serviceURL() string { return c.b.ServiceURL() }

func (c *conn) tlsServiceURL() *string { return c.b.tlsServiceURL() }

func (c *conn) notServed(naming.Topic) *serverError { return nil }

func (c *conn) lookupElsewhere(*pb.CommandLookupTopic, naming.Topic) bool { return false }
