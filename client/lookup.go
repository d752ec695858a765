package client

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

const maxLookupRedirects = 20

// brokerAddr is where a topic is served: logical is the broker's URL, physical the address
// to dial (the service URL when the lookup said to proxy through it).
type brokerAddr struct{ logical, physical string }

// serviceConn returns a connection to the service URL, for requests any broker answers.
func (cl *Client) serviceConn(ctx context.Context) (*conn, error) {
	return cl.pool.get(ctx, cl.service, cl.service)
}

// connFor returns a connection to the broker serving topic.
func (cl *Client) connFor(ctx context.Context, topic string) (*conn, error) {
	a, err := cl.lookup(ctx, topic)
	if err != nil {
		return nil, err
	}
	return cl.pool.get(ctx, a.logical, a.physical)
}

// lookup finds the broker that owns topic, following redirects as upstream's clients: each
// redirect re-sends LOOKUP to the named broker with the authoritative flag it returned.
func (cl *Client) lookup(ctx context.Context, topic string) (brokerAddr, error) {
	at := brokerAddr{cl.service, cl.service}
	authoritative := false
	for range maxLookupRedirects + 1 {
		c, err := cl.pool.get(ctx, at.logical, at.physical)
		if err != nil {
			return brokerAddr{}, err
		}
		resp, err := c.request(ctx, &pb.BaseCommand{
			Type: pb.BaseCommand_LOOKUP.Enum(),
			LookupTopic: &pb.CommandLookupTopic{
				Topic:                  proto.String(topic),
				Authoritative:          proto.Bool(authoritative),
				AdvertisedListenerName: proto.String(cl.opts.ListenerName),
			},
		})
		if err != nil {
			return brokerAddr{}, err
		}
		lr := resp.GetLookupTopicResponse()
		if lr == nil {
			return brokerAddr{}, fmt.Errorf("%w: LOOKUP answered with %v", ErrProtocol, resp.GetType())
		}
		if lr.GetResponse() == pb.CommandLookupTopicResponse_Failed {
			return brokerAddr{}, serverError(lr.GetError(), lr.GetMessage())
		}
		u := lr.GetBrokerServiceUrl()
		if cl.useTLS() {
			u = lr.GetBrokerServiceUrlTls()
		}
		if u == "" {
			return brokerAddr{}, fmt.Errorf("%w: LOOKUP of %s returned no broker URL", ErrProtocol, topic)
		}
		su, err := parseServiceURL(u)
		if err != nil {
			return brokerAddr{}, fmt.Errorf("%w: LOOKUP of %s returned %q", ErrProtocol, topic, u)
		}
		next := brokerAddr{logical: su.String(), physical: su.String()}
		if lr.GetProxyThroughServiceUrl() {
			next.physical = cl.service
		}
		if lr.GetResponse() == pb.CommandLookupTopicResponse_Connect {
			return next, nil
		}
		at = next
		authoritative = lr.GetAuthoritative()
	}
	return brokerAddr{}, fmt.Errorf("%w: %s", ErrTooManyRedirects, topic)
}

// retryable reports whether a request to "any broker" may succeed if sent again.
func retryable(err error) bool {
	return errors.Is(err, ErrClosed) || errors.Is(err, ErrConnect) || errors.Is(err, ErrServiceNotReadyClient) ||
		errors.Is(err, ErrServiceNotReady) || errors.Is(err, ErrTooManyRequests) ||
		errors.Is(err, &ServerError{Code: pb.ServerError_UnknownError}) ||
		errors.Is(err, &ServerError{Code: pb.ServerError_MetadataError})
}

// withRetry runs fn until it succeeds, fails for good, or the operation timeout passes.
func (cl *Client) withRetry(ctx context.Context, what string, fn func(context.Context) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cl.opts.OperationTimeout)
		defer cancel()
	}
	bo := newBackoff()
	for {
		err := fn(ctx)
		if err == nil || !retryable(err) || cl.isClosed() {
			return err
		}
		cl.log.Debug("retrying", "what", what, "err", err)
		if !sleepCtx(ctx, bo.Next()) {
			return fmt.Errorf("%w (last error: %w)", ctxError(ctx, what), err)
		}
	}
}

// partitions returns the number of partitions of topic, 0 for a non-partitioned topic.
func (cl *Client) partitions(ctx context.Context, topic string) (int, error) {
	var n int
	err := cl.withRetry(ctx, "partitioned metadata", func(ctx context.Context) error {
		c, err := cl.serviceConn(ctx)
		if err != nil {
			return err
		}
		resp, err := c.request(ctx, &pb.BaseCommand{
			Type:              pb.BaseCommand_PARTITIONED_METADATA.Enum(),
			PartitionMetadata: &pb.CommandPartitionedTopicMetadata{Topic: proto.String(topic)},
		})
		if err != nil {
			return err
		}
		r := resp.GetPartitionMetadataResponse()
		if r == nil {
			return fmt.Errorf("%w: PARTITIONED_METADATA answered with %v", ErrProtocol, resp.GetType())
		}
		if r.GetResponse() == pb.CommandPartitionedTopicMetadataResponse_Failed {
			return serverError(r.GetError(), r.GetMessage())
		}
		n = int(r.GetPartitions())
		return nil
	})
	return n, err
}

// TopicPartitions returns the partition names of topic (the topic itself when it is not
// partitioned), fully qualified.
func (cl *Client) TopicPartitions(ctx context.Context, topic string) ([]string, error) {
	tn, err := parseTopic(topic)
	if err != nil {
		return nil, err
	}
	n, err := cl.partitions(ctx, tn.String())
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return []string{tn.String()}, nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = tn.PartitionTopic(i).String()
	}
	return out, nil
}

// TopicsOfNamespace lists the persistent topics of namespace ("tenant/ns"), partitions
// expanded, as the broker reports them.
func (cl *Client) TopicsOfNamespace(ctx context.Context, namespace string) ([]string, error) {
	var topics []string
	err := cl.withRetry(ctx, "topics of namespace", func(ctx context.Context) error {
		c, err := cl.serviceConn(ctx)
		if err != nil {
			return err
		}
		resp, err := c.request(ctx, &pb.BaseCommand{
			Type: pb.BaseCommand_GET_TOPICS_OF_NAMESPACE.Enum(),
			GetTopicsOfNamespace: &pb.CommandGetTopicsOfNamespace{
				Namespace: proto.String(namespace),
				Mode:      pb.CommandGetTopicsOfNamespace_PERSISTENT.Enum(),
			},
		})
		if err != nil {
			return err
		}
		r := resp.GetGetTopicsOfNamespaceResponse()
		if r == nil {
			return fmt.Errorf("%w: GET_TOPICS_OF_NAMESPACE answered with %v", ErrProtocol, resp.GetType())
		}
		topics = r.GetTopics()
		return nil
	})
	return topics, err
}

// fetchSchema asks for the schema of topic at version (nil: the latest).
func (cl *Client) fetchSchema(ctx context.Context, topic string, version []byte) (*pb.Schema, error) {
	var schema *pb.Schema
	err := cl.withRetry(ctx, "get schema", func(ctx context.Context) error {
		c, err := cl.serviceConn(ctx)
		if err != nil {
			return err
		}
		resp, err := c.request(ctx, &pb.BaseCommand{
			Type:      pb.BaseCommand_GET_SCHEMA.Enum(),
			GetSchema: &pb.CommandGetSchema{Topic: proto.String(topic), SchemaVersion: version},
		})
		if err != nil {
			return err
		}
		r := resp.GetGetSchemaResponse()
		if r == nil {
			return fmt.Errorf("%w: GET_SCHEMA answered with %v", ErrProtocol, resp.GetType())
		}
		if r.ErrorCode != nil {
			return serverError(r.GetErrorCode(), r.GetErrorMessage())
		}
		if r.Schema == nil {
			return fmt.Errorf("%w: no schema for %s", ErrSchema, topic)
		}
		schema = r.Schema
		return nil
	})
	return schema, err
}
