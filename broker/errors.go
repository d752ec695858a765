package broker

import (
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
