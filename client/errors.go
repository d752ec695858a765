package client

import (
	"errors"
	"fmt"
	"strings"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// Sentinel errors. Every error the package returns can be tested with errors.Is against one of
// these or unwrapped with errors.As into a *ServerError or *BrokerClosedError.
var (
	// ErrClosed is returned by operations on a closed Client, Producer, Consumer or Reader, and
	// by requests whose connection closed before they were answered.
	ErrClosed = errors.New("pulsar: closed")
	// ErrTimeout is returned when an operation ran out of time (its ctx deadline or the
	// client's OperationTimeout). The error also matches context.DeadlineExceeded when the
	// context expired.
	ErrTimeout = errors.New("pulsar: timed out")
	// ErrConnect is returned when no connection to a broker could be established.
	ErrConnect = errors.New("pulsar: cannot connect")
	// ErrCredentials is returned when Options.TokenSource could not supply a token to connect
	// with (it wraps the source's error: an OAuth2 issuer's refusal, or an issuer that does not
	// answer). A request fails with it at once, as retrying would only ask again; producers
	// and consumers that are reconnecting keep trying.
	ErrCredentials = errors.New("pulsar: no credentials")
	// ErrInvalidConfig is returned for invalid options.
	ErrInvalidConfig = errors.New("pulsar: invalid configuration")
	// ErrInvalidTopic is returned for a topic name that cannot be parsed.
	ErrInvalidTopic = errors.New("pulsar: invalid topic name")
	// ErrMessageTooLarge is returned by Send for a message above the broker's max message size.
	ErrMessageTooLarge = errors.New("pulsar: message too large")
	// ErrProtocol means the peer sent something this client cannot accept; the connection it
	// came on has been closed.
	ErrProtocol = errors.New("pulsar: protocol error")
	// ErrTooManyRedirects is returned by a lookup that was redirected more than 20 times.
	ErrTooManyRedirects = errors.New("pulsar: too many lookup redirects")
	// ErrSchema is returned when a payload cannot be encoded or decoded with a schema.
	ErrSchema = errors.New("pulsar: schema error")
	// ErrNoMoreMessages is what a Reader returns past the end when asked not to wait.
	ErrNoMoreMessages = errors.New("pulsar: no more messages")
)

// ServerError is an error the broker reported (ERROR, SEND_ERROR, or the error fields of a
// typed response).
type ServerError struct {
	Code    pb.ServerError
	Message string
}

func (e *ServerError) Error() string {
	if e.Message == "" {
		return "pulsar: server error " + e.Code.String()
	}
	return fmt.Sprintf("pulsar: server error %s: %s", e.Code, e.Message)
}

// Is reports whether target is a *ServerError with the same code (its Message is ignored),
// so errors.Is(err, ErrTopicNotFound) works for the sentinels below.
func (e *ServerError) Is(target error) bool {
	t, ok := target.(*ServerError)
	return ok && t.Code == e.Code && t.Message == ""
}

// Server error sentinels for use with errors.Is.
var (
	ErrTopicNotFound          = &ServerError{Code: pb.ServerError_TopicNotFound}
	ErrSubscriptionNotFound   = &ServerError{Code: pb.ServerError_SubscriptionNotFound}
	ErrConsumerBusy           = &ServerError{Code: pb.ServerError_ConsumerBusy}
	ErrProducerBusy           = &ServerError{Code: pb.ServerError_ProducerBusy}
	ErrProducerFenced         = &ServerError{Code: pb.ServerError_ProducerFenced}
	ErrTopicTerminated        = &ServerError{Code: pb.ServerError_TopicTerminatedError}
	ErrNotAllowed             = &ServerError{Code: pb.ServerError_NotAllowedError}
	ErrAuthentication         = &ServerError{Code: pb.ServerError_AuthenticationError}
	ErrAuthorization          = &ServerError{Code: pb.ServerError_AuthorizationError}
	ErrServiceNotReady        = &ServerError{Code: pb.ServerError_ServiceNotReady}
	ErrIncompatibleSchema     = &ServerError{Code: pb.ServerError_IncompatibleSchema}
	ErrTooManyRequests        = &ServerError{Code: pb.ServerError_TooManyRequests}
	ErrInvalidTopicNameServer = &ServerError{Code: pb.ServerError_InvalidTopicName}
)

// BrokerClosedError is returned by Send, Receive and friends after the broker closed the
// producer or consumer and said not to reconnect (CommandCloseProducer/CommandCloseConsumer
// allow_reconnect=false), typically because its topic or namespace was deleted. It matches
// ErrClosed.
type BrokerClosedError struct {
	Topic  string
	Reason string
}

func (e *BrokerClosedError) Error() string {
	var b strings.Builder
	b.WriteString("pulsar: closed by the broker")
	if e.Topic != "" {
		b.WriteString(" (" + e.Topic + ")")
	}
	if e.Reason != "" {
		b.WriteString(": " + e.Reason)
	}
	return b.String()
}

// Is makes a BrokerClosedError match ErrClosed.
func (e *BrokerClosedError) Is(target error) bool { return target == ErrClosed }

func serverError(code pb.ServerError, msg string) error {
	return &ServerError{Code: code, Message: msg}
}

// permanent reports whether a (re)connect error means retrying is pointless, as upstream's
// clients decide.
func permanent(err error) bool {
	var be *BrokerClosedError
	return errors.Is(err, ErrTopicNotFound) || errors.Is(err, ErrTopicTerminated) ||
		errors.Is(err, ErrProducerFenced) || errors.Is(err, ErrInvalidTopicNameServer) ||
		errors.Is(err, ErrAuthorization) || errors.Is(err, ErrNotAllowed) ||
		errors.Is(err, ErrInvalidConfig) || errors.Is(err, ErrInvalidTopic) ||
		errors.As(err, &be)
}
