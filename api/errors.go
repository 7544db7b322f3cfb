package api

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// errorBody is the JSON every failed request answers with.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code              switchboard.Code `json:"code"`
	Message           string           `json:"message"`
	Field             string           `json:"field,omitempty"`
	RetryAfterSeconds int              `json:"retry_after_seconds,omitempty"`
}

// fail answers the request with err mapped to its code's status. Internal errors are
// logged with their detail and shown with a generic message; nothing else is logged.
func (s *server) fail(c *gin.Context, err error) {
	e := switchboard.AsError(err)
	if e.Code == switchboard.CodeInternal && switchboard.DatabaseDown(err) {
		s.log.WarnContext(c.Request.Context(), "request failed: the database does not answer", "method", c.Request.Method, "path", c.FullPath(), "err", err)
		e = switchboard.Unavailable(err)
	}
	msg := e.Message
	if e.Code == switchboard.CodeInternal {
		s.log.ErrorContext(c.Request.Context(), "request failed", "method", c.Request.Method, "path", c.FullPath(), "err", err)
		msg = "internal error; try again, and tell the operator if it persists"
	}
	if msg == "" {
		msg = http.StatusText(e.Code.HTTPStatus())
	}
	if dial := providers.DialFailure(err); dial != "" && e.Code == switchboard.CodeUpstream {
		// Where the hub dialled and what the network said go to the log, and to the
		// deployment's operator, who set the base URL; a tenant's people get the message.
		s.log.WarnContext(c.Request.Context(), "upstream could not be reached", "method", c.Request.Method, "path", c.FullPath(), "err", dial)
		if p, perr := principal(c); perr == nil && p.Operator {
			msg += " (" + dial + ")"
		}
	}
	body := errorBody{Error: errorDetail{Code: e.Code, Message: msg, Field: e.Field}}
	if e.RetryAfter > 0 {
		secs := int((e.RetryAfter + 999_999_999) / 1_000_000_000)
		body.Error.RetryAfterSeconds = secs
		c.Header("Retry-After", strconv.Itoa(secs))
	}
	c.AbortWithStatusJSON(e.Code.HTTPStatus(), body)
}

// recovered answers a handler's panic as an internal error.
func (s *server) recovered(c *gin.Context, v any) {
	s.log.ErrorContext(c.Request.Context(), "handler panicked", "method", c.Request.Method, "path", c.FullPath(), "panic", v)
	c.AbortWithStatusJSON(http.StatusInternalServerError, errorBody{Error: errorDetail{Code: switchboard.CodeInternal, Message: "internal error; try again, and tell the operator if it persists"}})
}

func notFoundRoute(c *gin.Context) {
	c.AbortWithStatusJSON(http.StatusNotFound, errorBody{Error: errorDetail{Code: switchboard.CodeNotFound, Message: "no such API endpoint: " + c.Request.Method + " " + c.Request.URL.Path}})
}

func methodNotAllowed(c *gin.Context) {
	c.AbortWithStatusJSON(http.StatusMethodNotAllowed, errorBody{Error: errorDetail{Code: switchboard.CodeMethodNotAllowed, Message: "method " + c.Request.Method + " is not allowed on " + c.Request.URL.Path}})
}
