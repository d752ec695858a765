package client

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/naming"
	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// discover subscribes to topics of the pattern's namespace that match and are new.
func (c *Consumer) discover(ctx context.Context) error {
	_, domain, ns, err := patternTopic(c.opts.TopicsPattern)
	if err != nil {
		return err
	}
	if domain != "persistent" {
		return fmt.Errorf("%w: topics pattern: only persistent topics can be discovered", ErrInvalidTopic)
	}
	topics, err := c.cl.TopicsOfNamespace(ctx, ns)
	if err != nil {
		return err
	}
	seen := make(map[string]bool)
	for _, n := range topics {
		tn, err := parseTopic(n)
		if err != nil {
			continue
		}
		base := tn.Base().String()
		if seen[base] || !c.re.MatchString(base) {
			continue
		}
		seen[base] = true
		if naming.IsLetterName(base) {
			// Never consume our own retry/DLQ topics by accident of a broad pattern
			// unless explicitly matched by name.
			if !strings.HasSuffix(c.opts.TopicsPattern, RetryTopicSuffix) && !strings.HasSuffix(c.opts.TopicsPattern, DLQTopicSuffix) {
				continue
			}
		}
		if err := c.subscribeTopic(ctx, base, c.opts.TopicPurpose); err != nil {
			return err
		}
	}
	return nil
}

// Seek moves the subscription to id (the next message received is the one at id). The
// consumer must be attached to a single partition, or id must carry the partition. The
// broker then detaches the consumer, which resubscribes; messages already queued locally are
// dropped.
func (c *Consumer) Seek(ctx context.Context, id MessageID) error {
	pc, err := c.partitionFor(id.Partition)
	if err != nil {
		return err
	}
	return c.seekPartition(ctx, pc, id)
}

func (c *Consumer) seekPartition(ctx context.Context, pc *partitionConsumer, id MessageID) error {
	target := id.pb()
	if id.isEarliest() {
		target = &pb.MessageIdData{LedgerId: proto.Uint64(0), EntryId: proto.Uint64(0)}
	}
	pc.mu.Lock()
	pc.seeking = true
	pc.minPublish, pc.seekTime = time.Time{}, time.Time{}
	if c.opts.nonDurable {
		// A reader's acknowledgement still waiting would move the new position past it.
		pc.acks.take(false)
		pc.startID, pc.startInclusive, pc.hasStart = id, true, !id.isEarliest() && !id.isLatest()
	}
	pc.mu.Unlock()
	_, err := pc.request(ctx, &pb.BaseCommand{Type: pb.BaseCommand_SEEK.Enum(),
		Seek: &pb.CommandSeek{ConsumerId: proto.Uint64(pc.id), MessageId: target}})
	if err != nil {
		pc.mu.Lock()
		pc.seeking = false
		pc.mu.Unlock()
	}
	return err
}

// SeekByTime moves every partition's subscription to the first message published at or
// after t.
func (c *Consumer) SeekByTime(ctx context.Context, t time.Time) error {
	for _, pc := range c.partitionList() {
		pc.mu.Lock()
		pc.seeking = true
		if c.opts.nonDurable {
			pc.acks.take(false) // as in seekPartition
			// A reader's subscription goes away when the broker detaches it after the seek,
			// and a start id cannot say "from this time": resubscribe from the earliest and
			// skip what was published before t.
			pc.startID, pc.startInclusive, pc.hasStart = EarliestMessageID(), false, false
			pc.minPublish, pc.seekTime = time.Time{}, t.Truncate(time.Millisecond)
		}
		pc.mu.Unlock()
		if _, err := pc.request(ctx, &pb.BaseCommand{Type: pb.BaseCommand_SEEK.Enum(),
			Seek: &pb.CommandSeek{ConsumerId: proto.Uint64(pc.id), MessagePublishTime: proto.Uint64(uint64(t.UnixMilli()))}}); err != nil {
			pc.mu.Lock()
			pc.seeking = false
			pc.mu.Unlock()
			return err
		}
	}
	return nil
}

func (c *Consumer) partitionFor(partition int32) (*partitionConsumer, error) {
	parts := c.partitionList()
	if len(parts) == 1 {
		return parts[0], nil
	}
	for _, pc := range parts {
		if partition >= 0 && pc.partition == partition {
			return pc, nil
		}
	}
	return nil, fmt.Errorf("%w: seek needs a single-partition consumer or an id with its partition", ErrInvalidConfig)
}

// Unsubscribe deletes the subscription on every topic, then closes the consumer.
func (c *Consumer) Unsubscribe(ctx context.Context) error {
	for _, pc := range c.partitionList() {
		if _, err := pc.request(ctx, &pb.BaseCommand{Type: pb.BaseCommand_UNSUBSCRIBE.Enum(),
			Unsubscribe: &pb.CommandUnsubscribe{ConsumerId: proto.Uint64(pc.id), Force: proto.Bool(true)}}); err != nil {
			return err
		}
	}
	return c.Close()
}

// lastMessageID asks the broker for the id of the last message of pc's topic; Entry is -1
// when the topic is empty.
func (pc *partitionConsumer) lastMessageID(ctx context.Context) (MessageID, error) {
	var id MessageID
	err := pc.cl.withRetry(ctx, "get last message id", func(ctx context.Context) error {
		resp, err := pc.request(ctx, &pb.BaseCommand{Type: pb.BaseCommand_GET_LAST_MESSAGE_ID.Enum(),
			GetLastMessageId: &pb.CommandGetLastMessageId{ConsumerId: proto.Uint64(pc.id)}})
		if err != nil {
			return err
		}
		r := resp.GetGetLastMessageIdResponse()
		if r == nil {
			return fmt.Errorf("%w: GET_LAST_MESSAGE_ID answered with %v", ErrProtocol, resp.GetType())
		}
		id = idFromPB(r.GetLastMessageId(), pc.partition)
		return nil
	})
	return id, err
}

// LastMessageIDs returns, per partition, the id of the last message published.
func (c *Consumer) LastMessageIDs(ctx context.Context) (map[string]MessageID, error) {
	out := make(map[string]MessageID)
	for _, pc := range c.partitionList() {
		id, err := pc.lastMessageID(ctx)
		if err != nil {
			return nil, err
		}
		out[pc.topic] = id
	}
	return out, nil
}
