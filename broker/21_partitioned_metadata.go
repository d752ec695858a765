package broker

import "github.com/letterbox-dev/letterbox/client/wire/pb"

// PARTITIONED_METADATA → PARTITIONED_METADATA_RESPONSE. Failures are answered with the typed
// response, never a bare ERROR (the Go client retries a bare ERROR for 30 s). With auto-creation
// (broker policy and the request's metadata_auto_creation_enabled, PIP-344) a missing topic is
// created as allowAutoTopicCreationType says — partitioned metadata with defaultNumPartitions,
// except for names ending -DLQ/-RETRY, which are always non-partitioned (upstream 3.0.5+).

func (c *conn) handlePartitionedMetadata(cmd *pb.CommandPartitionedTopicMetadata) error {
	name, err := parseTopicName(cmd.GetTopic())
	if err != nil {
		c.sendPartitionedMetadataError(cmd.GetRequestId(), pb.ServerError_InvalidTopicName, err.Error())
		return nil
	}
	if !c.may(OpLookup, name, "") {
		c.sendPartitionedMetadataError(cmd.GetRequestId(), pb.ServerError_AuthorizationError, "Client is not authorized to Get Partition Metadata")
		return nil
	}
	n, serr := c.b.topics.partitionedMetadata(name, cmd.GetMetadataAutoCreationEnabled())
	if serr != nil {
		c.sendPartitionedMetadataError(cmd.GetRequestId(), serr.code, serr.msg)
		return nil
	}
	c.send(&pb.BaseCommand{
		Type: pb.BaseCommand_PARTITIONED_METADATA_RESPONSE.Enum(),
		PartitionMetadataResponse: &pb.CommandPartitionedTopicMetadataResponse{
			RequestId:  cmd.RequestId,
			Partitions: ptr(uint32(n)),
			Response:   pb.CommandPartitionedTopicMetadataResponse_Success.Enum(),
		},
	}, nil)
	return nil
}

func (c *conn) sendPartitionedMetadataError(requestID uint64, code pb.ServerError, msg string) {
	c.send(&pb.BaseCommand{
		Type: pb.BaseCommand_PARTITIONED_METADATA_RESPONSE.Enum(),
		PartitionMetadataResponse: &pb.CommandPartitionedTopicMetadataResponse{
			RequestId: &requestID,
			Response:  pb.CommandPartitionedTopicMetadataResponse_Failed.Enum(),
			Error:     code.Enum(),
			Message:   &msg,
		},
	}, nil)
}
