package broker

import (
	"hash/crc32"
	"regexp"
	"strings"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// GET_TOPICS_OF_NAMESPACE → the namespace's topics, fully qualified, partitions expanded. With a
// topics_pattern (newer Java clients) the list is filtered here and marked filtered, and a
// topics_hash equal to ours answers changed=false without the list, as upstream does. A
// namespace that does not exist has no topics: the answer is an empty list, as upstream's
// (an error would have pattern consumers retry it until their operation timeout).

// maxPatternLength bounds what we evaluate, as upstream's subscriptionPatternMaxLength.
const maxPatternLength = 50

func (c *conn) handleGetTopicsOfNamespace(cmd *pb.CommandGetTopicsOfNamespace) error {
	reqID := cmd.GetRequestId()
	ns := cmd.GetNamespace()
	if !c.mayListTopics(ns) {
		c.sendError(reqID, pb.ServerError_AuthorizationError, "Client is not authorized to GetTopicsOfNamespace")
		return nil
	}
	topics := c.b.topics.list(ns, cmd.GetMode())
	resp := &pb.CommandGetTopicsOfNamespaceResponse{RequestId: &reqID}
	if pat := cmd.GetTopicsPattern(); pat != "" && len(pat) <= maxPatternLength {
		// Clients send Java regexes; the common ones are valid RE2. One we cannot compile is
		// left to the client to filter.
		if re, err := regexp.Compile(pat); err == nil {
			filtered := topics[:0:0]
			for _, t := range topics {
				if re.MatchString(stripPartition(t)) {
					filtered = append(filtered, t)
				}
			}
			topics = filtered
			resp.Filtered = ptr(true)
		}
	}
	hash := topicsHash(topics)
	resp.TopicsHash = &hash
	if cmd.GetTopicsHash() == hash {
		resp.Changed = ptr(false)
	} else {
		resp.Topics = topics
	}
	c.send(&pb.BaseCommand{Type: pb.BaseCommand_GET_TOPICS_OF_NAMESPACE_RESPONSE.Enum(), GetTopicsOfNamespaceResponse: resp}, nil)
	return nil
}

func stripPartition(full string) string { return naming.BaseName(full) }

// topicsHash is upstream's hash of a sorted topic list: CRC32C of the names joined by ","
// written as hex of its little-endian bytes (how Guava prints a 32-bit HashCode).
func topicsHash(sorted []string) string {
	sum := crc32.Checksum([]byte(strings.Join(sorted, ",")), crc32.MakeTable(crc32.Castagnoli))
	const hexdigits = "0123456789abcdef"
	out := make([]byte, 0, 8)
	for i := range 4 {
		b := byte(sum >> (8 * i))
		out = append(out, hexdigits[b>>4], hexdigits[b&15])
	}
	return string(out)
}
