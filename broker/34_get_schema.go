package broker

import "github.com/letterbox-dev/letterbox/client/wire/pb"

// GET_SCHEMA → the schema of the topic at the requested version (the newest when none is asked);
// a topic without one answers error_code TopicNotFound, as upstream.

func (c *conn) handleGetSchema(cmd *pb.CommandGetSchema) error {
	reqID := cmd.GetRequestId()
	fail := func(code pb.ServerError, msg string) {
		c.send(&pb.BaseCommand{Type: pb.BaseCommand_GET_SCHEMA_RESPONSE.Enum(), GetSchemaResponse: &pb.CommandGetSchemaResponse{
			RequestId: &reqID, ErrorCode: code.Enum(), ErrorMessage: &msg,
		}}, nil)
	}
	name, err := parseTopicName(cmd.GetTopic())
	if err != nil {
		fail(pb.ServerError_InvalidTopicName, err.Error())
		return nil
	}
	s, ver, ok := c.b.schemas.get(name, cmd.GetSchemaVersion())
	if !ok {
		fail(pb.ServerError_TopicNotFound, "Topic not found or no-schema")
		return nil
	}
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_GET_SCHEMA_RESPONSE.Enum(), GetSchemaResponse: &pb.CommandGetSchemaResponse{
		RequestId: &reqID, Schema: s, SchemaVersion: ver,
	}}, nil)
	return nil
}
