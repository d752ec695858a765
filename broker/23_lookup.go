package broker

import "github.com/letterbox-dev/letterbox/client/wire/pb"

// LOOKUP → LOOKUP_RESPONSE. A single broker owns every topic, so a valid name is always answered
// Connect, authoritative, with our own advertised URL (never Redirect: the Go client would loop
// 20 times on a redirect to itself). Only a broker playing a cluster (frontend.go) redirects.
// Lookup does not create the topic; PRODUCER and SUBSCRIBE do. It opens a stored topic that is
// not open yet, so that the PRODUCER or SUBSCRIBE that follows finds it ready.

func (c *conn) handleLookup(cmd *pb.CommandLookupTopic) error {
	name, err := parseTopicName(cmd.GetTopic())
	if err != nil {
		c.sendLookupError(cmd.GetRequestId(), pb.ServerError_InvalidTopicName, err.Error())
		return nil
	}
	if !c.may(OpLookup, name, "") {
		c.sendLookupError(cmd.GetRequestId(), pb.ServerError_AuthorizationError, "Client is not authorized to Lookup")
		return nil
	}
	if c.lookupElsewhere(cmd, name) { // another front end owns it (frontend.go)
		return nil
	}
	c.b.topics.load(name) // a stored topic opens on its first lookup (topics_lazy.go)
	url := c.serviceURL()
	c.send(&pb.BaseCommand{
		Type: pb.BaseCommand_LOOKUP_RESPONSE.Enum(),
		LookupTopicResponse: &pb.CommandLookupTopicResponse{
			RequestId:           cmd.RequestId,
			Response:            pb.CommandLookupTopicResponse_Connect.Enum(),
			BrokerServiceUrl:    &url,
			BrokerServiceUrlTls: c.tlsServiceURL(),
			Authoritative:       ptr(true),
		},
	}, nil)
	return nil
}

func (c *conn) sendLookupError(requestID uint64, code pb.ServerError, msg string) {
	c.send(&pb.BaseCommand{
		Type: pb.BaseCommand_LOOKUP_RESPONSE.Enum(),
		LookupTopicResponse: &pb.CommandLookupTopicResponse{
			RequestId: &requestID,
			Response:  pb.CommandLookupTopicResponse_Failed.Enum(),
			Error:     code.Enum(),
			Message:   &msg,
		},
	}, nil)
}
