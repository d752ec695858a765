package broker

import "github.com/letterbox-dev/letterbox/client/wire/pb"

// command is how a connection serves one command type: what handles it, the request id its
// sender waits on, and how a failure is answered in the shape that sender waits for. One entry
// per type keeps the three together, so a new command cannot be handled yet answered wrongly.
type command struct {
	handle func(c *conn, cmd *pb.BaseCommand, payload []byte) error
	// requestID is the id the sender waits on; nil (or false) for a command nobody waits on.
	requestID func(cmd *pb.BaseCommand) (uint64, bool)
	// fail answers the command with an error; nil: an ERROR for its request id, if it has one.
	fail func(c *conn, cmd *pb.BaseCommand, code pb.ServerError, msg string)
}

// commands is every command type the broker serves; a type not here closes the connection.
var commands = map[pb.BaseCommand_Type]command{
	pb.BaseCommand_CONNECT:        notice((*pb.BaseCommand).GetConnect, (*conn).handleConnect),
	pb.BaseCommand_AUTH_RESPONSE:  notice((*pb.BaseCommand).GetAuthResponse, (*conn).handleAuthResponse),
	pb.BaseCommand_SUBSCRIBE:      request((*pb.BaseCommand).GetSubscribe, (*conn).handleSubscribe),
	pb.BaseCommand_PRODUCER:       request((*pb.BaseCommand).GetProducer, (*conn).handleProducer),
	pb.BaseCommand_UNSUBSCRIBE:    request((*pb.BaseCommand).GetUnsubscribe, (*conn).handleUnsubscribe),
	pb.BaseCommand_CLOSE_PRODUCER: request((*pb.BaseCommand).GetCloseProducer, (*conn).handleCloseProducer),
	pb.BaseCommand_CLOSE_CONSUMER: request((*pb.BaseCommand).GetCloseConsumer, (*conn).handleCloseConsumer),
	pb.BaseCommand_SEND: {
		handle: func(c *conn, cmd *pb.BaseCommand, payload []byte) error {
			return c.handleSend(cmd.GetSend(), payload)
		},
		// A producer waits on its sequence id, not a request id: SEND_ERROR echoes it.
		fail: func(c *conn, cmd *pb.BaseCommand, code pb.ServerError, msg string) {
			c.send(sendError(cmd.GetSend(), code, msg), nil)
		},
	},
	pb.BaseCommand_ACK: {
		handle: func(c *conn, cmd *pb.BaseCommand, _ []byte) error { return c.handleAck(cmd.GetAck()) },
		// Only an ACK that asks for a receipt carries a request id.
		requestID: func(cmd *pb.BaseCommand) (uint64, bool) {
			return cmd.GetAck().GetRequestId(), cmd.GetAck().RequestId != nil
		},
	},
	pb.BaseCommand_FLOW: notice((*pb.BaseCommand).GetFlow, (*conn).handleFlow),
	pb.BaseCommand_REDELIVER_UNACKNOWLEDGED_MESSAGES: notice((*pb.BaseCommand).GetRedeliverUnacknowledgedMessages,
		(*conn).handleRedeliver),
	pb.BaseCommand_PING: {handle: func(c *conn, _ *pb.BaseCommand, _ []byte) error { return c.handlePing() }},
	// The reader noted that the connection was heard from; that is all a PONG is for.
	pb.BaseCommand_PONG: {handle: func(*conn, *pb.BaseCommand, []byte) error { return nil }},
	pb.BaseCommand_PARTITIONED_METADATA: withFail(request((*pb.BaseCommand).GetPartitionMetadata, (*conn).handlePartitionedMetadata),
		(*conn).sendPartitionedMetadataError),
	pb.BaseCommand_LOOKUP: withFail(request((*pb.BaseCommand).GetLookupTopic, (*conn).handleLookup),
		(*conn).sendLookupError),
	pb.BaseCommand_CONSUMER_STATS:          request((*pb.BaseCommand).GetConsumerStats, (*conn).handleConsumerStats),
	pb.BaseCommand_SEEK:                    request((*pb.BaseCommand).GetSeek, (*conn).handleSeek),
	pb.BaseCommand_GET_LAST_MESSAGE_ID:     request((*pb.BaseCommand).GetGetLastMessageId, (*conn).handleGetLastMessageID),
	pb.BaseCommand_GET_TOPICS_OF_NAMESPACE: request((*pb.BaseCommand).GetGetTopicsOfNamespace, (*conn).handleGetTopicsOfNamespace),
	pb.BaseCommand_GET_SCHEMA:              request((*pb.BaseCommand).GetGetSchema, (*conn).handleGetSchema),
	pb.BaseCommand_GET_OR_CREATE_SCHEMA:    request((*pb.BaseCommand).GetGetOrCreateSchema, (*conn).handleGetOrCreateSchema),
	// Transactions are refused in the answer the client waits for, whose error says so; a
	// failure the interceptor asks for is not answered, as that answer has no other shape.
	pb.BaseCommand_TC_CLIENT_CONNECT_REQUEST: {
		handle: func(c *conn, cmd *pb.BaseCommand, _ []byte) error {
			c.send(&pb.BaseCommand{
				Type: pb.BaseCommand_TC_CLIENT_CONNECT_RESPONSE.Enum(),
				TcClientConnectResponse: &pb.CommandTcClientConnectResponse{
					RequestId: cmd.GetTcClientConnectRequest().RequestId,
					Error:     pb.ServerError_NotAllowedError.Enum(),
					Message:   ptr("transactions are not supported by this broker"),
				},
			}, nil)
			return nil
		},
	},
}

// notice is a command no answer is waited for by request id: its handler answers, if at all,
// in the command's own terms.
func notice[B any](body func(*pb.BaseCommand) B, h func(*conn, B) error) command {
	return command{handle: func(c *conn, cmd *pb.BaseCommand, _ []byte) error { return h(c, body(cmd)) }}
}

// request is a command whose sender waits on the request id its body carries.
func request[B interface{ GetRequestId() uint64 }](body func(*pb.BaseCommand) B, h func(*conn, B) error) command {
	return command{
		handle:    func(c *conn, cmd *pb.BaseCommand, _ []byte) error { return h(c, body(cmd)) },
		requestID: func(cmd *pb.BaseCommand) (uint64, bool) { return body(cmd).GetRequestId(), true },
	}
}

// withFail gives a request the error answer its type names instead of ERROR.
func withFail(cmd command, answer func(c *conn, requestID uint64, code pb.ServerError, msg string)) command {
	id := cmd.requestID
	cmd.fail = func(c *conn, bc *pb.BaseCommand, code pb.ServerError, msg string) {
		n, _ := id(bc)
		answer(c, n, code, msg)
	}
	return cmd
}

// failCommand answers cmd with an error in the shape its sender waits for.
func (c *conn) failCommand(cmd *pb.BaseCommand, code pb.ServerError, msg string) {
	h, ok := commands[cmd.GetType()]
	switch {
	case !ok:
	case h.fail != nil:
		h.fail(c, cmd, code, msg)
	case h.requestID != nil:
		if id, ok := h.requestID(cmd); ok {
			c.sendError(id, code, msg)
		}
	}
}
