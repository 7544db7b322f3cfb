package mcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/switchboard-hub/switchboard"
)

// unreachable is the answer to a failure to talk to a server at all (DNS, dial, TLS, a
// broken or timed-out connection): it says only that the server could not be reached,
// never the dial error, which names addresses the caller may not otherwise learn ("no
// route to host", the dialled IP). The detail goes to the log, without the URL's query.
// It returns nil for other failures (an answer the server gave).
func (s *Service) unreachable(server, doing string, err error) error {
	if !isTransportFailure(err) {
		return nil
	}
	s.log.Warn("remote MCP server could not be reached", "server", server, "doing", doing, "err", redactQuery(err))
	return &switchboard.Error{Code: switchboard.CodeUpstream,
		Message: fmt.Sprintf("could not %s the remote MCP server %s: the server could not be reached; check its url and that it is up", doing, server), Err: err}
}

// isTransportFailure reports whether err is a failure to exchange HTTP messages, as
// opposed to an answer.
func isTransportFailure(err error) bool {
	var (
		te *transport.Error
		ue *url.Error
		ne net.Error
	)
	return errors.As(err, &te) || errors.As(err, &ue) || errors.As(err, &ne) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// redactQuery drops the query of a transport error's URL (it may carry a key) for logs.
func redactQuery(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	u, perr := url.Parse(ue.URL)
	if perr != nil {
		return fmt.Errorf("%s (unparsable url): %w", ue.Op, ue.Err)
	}
	u.RawQuery, u.User = "", nil
	return fmt.Errorf("%s %s: %w", ue.Op, u.Redacted(), ue.Err)
}
