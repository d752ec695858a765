package broker

import (
	"errors"
	"fmt"

	"github.com/letterbox-dev/letterbox/client/wire/pb"
)

// serverError is a failure a handler reports to the client with a protocol error code.
type serverError struct {
	code pb.ServerError
	msg  string
}

func (e *serverError) Error() string { return e.code.String() + ": " + e.msg }

func errorf(code pb.ServerError, format string, args ...any) *serverError {
	return &serverError{code: code, msg: fmt.Sprintf(format, args...)}
}

// Errors the admin API returns, wrapped in *AdminError with upstream's reason text. The web
// layer maps each to its HTTP status (in brackets).
var (
	ErrNotFound           = errors.New("not found")           // 404
	ErrAlreadyExists      = errors.New("already exists")      // 409
	ErrConflict           = errors.New("conflict")            // 409: e.g. a namespace that is not empty
	ErrPreconditionFailed = errors.New("precondition failed") // 412: busy topic, bad partitioned name…
	ErrInvalidName        = errors.New("invalid name")        // 412, as upstream answers bad names
	ErrNotAllowed         = errors.New("not allowed")         // 405: e.g. peek on a partitioned topic
	ErrInvalidArgument    = errors.New("invalid argument")    // 400
	ErrNotAcceptable      = errors.New("not acceptable")      // 406: e.g. a partition count ≤ 0
	ErrUnprocessable      = errors.New("unprocessable")       // 422: e.g. fewer partitions than before
	ErrForbidden          = errors.New("forbidden")           // 403: e.g. a cluster that does not exist
)

// AdminError is an admin API failure: Kind is one of the Err* sentinels (errors.Is works), and
// Error() is the reason upstream would give.
type AdminError struct {
	Kind   error
	Reason string
}

func (e *AdminError) Error() string { return e.Reason }

func (e *AdminError) Unwrap() error { return e.Kind }

func adminErr(kind error, format string, args ...any) error {
	return &AdminError{Kind: kind, Reason: fmt.Sprintf(format, args...)}
}

// isKind reports whether err is one of the admin errors of kind.
func isKind(err, kind error) bool { return err != nil && errors.Is(err, kind) }
