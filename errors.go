// Package switchboard holds the domain types shared by every layer of Switchboard:
// tenant and principal identities, identifiers, and the error type with codes.
//
// Start from [Principal] (who calls: [TenantID], [PrincipalKind], [Role]), [Error] with
// its [Code], and [NewID].
package switchboard

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Code classifies an error so that outer layers can map it to an HTTP status or a tool error.
type Code string

// The error codes. Outer layers map them to statuses; only CodeInternal is logged with detail.
const (
	CodeInvalid      Code = "invalid"
	CodeUnauthorized Code = "unauthorized"
	CodeForbidden    Code = "forbidden"
	CodeNotFound     Code = "not_found"
	CodeConflict     Code = "conflict"
	CodeRateLimited  Code = "rate_limited"
	CodeReconnect    Code = "reconnect"
	CodeUpstream     Code = "upstream"
	CodeUnavailable  Code = "unavailable"
	CodeInternal     Code = "internal"
	// CodeMethodNotAllowed: the path exists, but not with the request's method.
	CodeMethodNotAllowed Code = "method_not_allowed"
	// CodeConfirmationRequired: the caller's confirm policy says a person must confirm
	// the call first, and it was not confirmed.
	CodeConfirmationRequired Code = "confirmation_required"
	// CodeCanceled: the caller canceled the call (or went away) before it finished.
	CodeCanceled Code = "canceled"
	// CodeOutcomeUnknown: a request that changes something was sent upstream and its
	// answer was lost (the connection broke, or the deadline passed): it may or may
	// not have taken effect, so it must be checked, not blindly retried.
	CodeOutcomeUnknown Code = "outcome_unknown"
)

// Codes returns every error code, in the order they are declared. An audit event's
// outcome is "ok" or one of them.
func Codes() []Code {
	return []Code{CodeInvalid, CodeUnauthorized, CodeForbidden, CodeNotFound, CodeConflict, CodeRateLimited,
		CodeReconnect, CodeUpstream, CodeUnavailable, CodeInternal, CodeMethodNotAllowed, CodeConfirmationRequired, CodeCanceled, CodeOutcomeUnknown}
}

// HTTPStatus is the status a REST response carries for the code.
func (c Code) HTTPStatus() int {
	switch c {
	case CodeInvalid:
		return http.StatusBadRequest
	case CodeUnauthorized:
		return http.StatusUnauthorized
	case CodeForbidden:
		return http.StatusForbidden
	case CodeNotFound:
		return http.StatusNotFound
	case CodeConflict, CodeConfirmationRequired:
		return http.StatusConflict
	case CodeCanceled:
		return statusClientClosedRequest
	case CodeRateLimited:
		return http.StatusTooManyRequests
	case CodeReconnect:
		return http.StatusFailedDependency
	case CodeUpstream:
		return http.StatusBadGateway
	case CodeOutcomeUnknown:
		return http.StatusGatewayTimeout
	case CodeUnavailable:
		return http.StatusServiceUnavailable
	case CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	default:
		return http.StatusInternalServerError
	}
}

// statusClientClosedRequest is the status of a call its caller canceled (nginx's 499):
// nobody usually reads it, but logs and tests do.
const statusClientClosedRequest = 499

// Error is an error with a code, a message a person or an agent can act on, and, for
// invalid input, the field at fault. Err, when set, is the cause; it is never shown.
type Error struct {
	Code       Code
	Message    string
	Field      string
	RetryAfter time.Duration
	Err        error
}

// Error renders the error for logs; responses use Message.
func (e *Error) Error() string {
	msg := e.Message
	if e.Field != "" {
		msg = e.Field + ": " + msg
	}
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, msg, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, msg)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an invalid-input error that names the field and the reason.
func Invalid(field, reason string) *Error {
	return &Error{Code: CodeInvalid, Field: field, Message: reason}
}

// NotFound returns a not-found error for a kind of thing; it never says whether the
// thing exists in another tenant.
func NotFound(kind string) *Error {
	return &Error{Code: CodeNotFound, Message: kind + " not found"}
}

// Internal wraps an unexpected failure; the message shown is generic.
func Internal(err error) *Error {
	return &Error{Code: CodeInternal, Message: "internal error", Err: err}
}

// Coder is implemented by errors that carry a code of their own (for example
// providers.UpstreamError), so that CodeOf finds it through wrapping.
type Coder interface {
	ErrorCode() Code
}

// CodeOf returns the code of the first coded error in err's chain, or CodeInternal.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var c Coder
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return CodeInternal
}

// AsError returns err as an *Error: itself if it is one (through wrapping), a coded
// error's code and message if it carries one, else an internal error wrapping it.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var c Coder
	if errors.As(err, &c) {
		return &Error{Code: c.ErrorCode(), Message: err.Error(), Err: err}
	}
	return Internal(err)
}
