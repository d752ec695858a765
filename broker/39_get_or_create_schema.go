package broker

import "github.com/letterbox-dev/letterbox/client/wire/pb"

// GET_OR_CREATE_SCHEMA → the version of the given schema on the topic, added as a new version if
// it is new. Compatibility strategies are not checked yet.

func (c *conn) handleGetOrCreateSchema(cmd *pb.CommandGetOrCreateSchema) error {
	reqID := cmd.GetRequestId()
	resp := &pb.CommandGetOrCreateSchemaResponse{RequestId: &reqID}
	fail := func(code pb.ServerError, msg string) {
		resp.ErrorCode, resp.ErrorMessage = code.Enum(), &msg
		c.send(&pb.BaseCommand{Type: pb.BaseCommand_GET_OR_CREATE_SCHEMA_RESPONSE.Enum(), GetOrCreateSchemaResponse: resp}, nil)
	}
	name, err := parseTopicName(cmd.GetTopic())
	if err != nil {
		fail(pb.ServerError_InvalidTopicName, err.Error())
		return nil
	}
	if _, serr := c.b.topics.get(name, true, ""); serr != nil {
		fail(serr.code, serr.msg)
		return nil
	}
	ver, serr := c.b.clientSchema(name, cmd.GetSchema())
	if serr != nil {
		fail(serr.code, serr.msg)
		return nil
	}
	resp.SchemaVersion = ver
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_GET_OR_CREATE_SCHEMA_RESPONSE.Enum(), GetOrCreateSchemaResponse: resp}, nil)
	return nil
}
