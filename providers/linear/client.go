package linear

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// providerName is the name Linear's errors carry.
const providerName = "linear"

// maxResponseBytes bounds what one answer may hold.
const maxResponseBytes = 8 << 20

// gqlRequest is the body of a GraphQL request.
type gqlRequest struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName"`
	Variables     map[string]any `json:"variables,omitempty"`
}

// gqlError is one entry of a GraphQL answer's errors.
// Linear API docs: https://linear.app/developers/graphql#errors
type gqlError struct {
	Message    string `json:"message"`
	Path       []any  `json:"path"`
	Extensions struct {
		Code                   string `json:"code"`
		Type                   string `json:"type"`
		UserPresentableMessage string `json:"userPresentableMessage"`
		StatusCode             int    `json:"statusCode"`
	} `json:"extensions"`
}

// gqlResponse is a GraphQL answer; data is decoded separately.
type gqlResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
}

// query sends one GraphQL operation to the Linear API (the Call's base URL is the
// GraphQL endpoint itself) with its arguments as variables, never spliced into the
// document, and decodes data into out. An answer carrying errors, whatever its HTTP
// status, is an *providers.UpstreamError classified from the first error's code.
func query(ctx context.Context, c *providers.Call, operation, document string, vars map[string]any, out any) error {
	b, err := json.Marshal(gqlRequest{Query: document, OperationName: operation, Variables: vars})
	if err != nil {
		return fmt.Errorf("encode linear %s: %w", operation, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL(""), bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("build linear %s: %w", operation, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		var ue *providers.UpstreamError
		if errors.As(err, &ue) || ctx.Err() != nil {
			return fmt.Errorf("linear %s: %w", operation, err)
		}
		return &switchboard.Error{Code: switchboard.CodeUpstream, Message: "Linear could not be reached; try again shortly",
			Err: fmt.Errorf("linear %s: %w", operation, err)}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return &switchboard.Error{Code: switchboard.CodeUpstream, Message: "Linear's answer was cut off; try again shortly",
			Err: fmt.Errorf("read linear %s: %w", operation, err)}
	}
	if len(data) > maxResponseBytes {
		return &providers.UpstreamError{Provider: providerName, Status: resp.StatusCode, Code: switchboard.CodeUpstream,
			Message: fmt.Sprintf("the answer is larger than %d bytes; ask for a smaller page (limit)", maxResponseBytes)}
	}
	var r gqlResponse
	jsonErr := json.Unmarshal(data, &r)
	if jsonErr == nil && len(r.Errors) > 0 {
		return graphQLError(resp, r.Errors)
	}
	if resp.StatusCode != http.StatusOK {
		msg := http.StatusText(resp.StatusCode)
		switch {
		case resp.StatusCode == http.StatusUnauthorized:
			msg += "; Linear no longer accepts this connection's credential: reconnect Linear"
		case resp.StatusCode == http.StatusTooManyRequests:
			msg += "; Linear's rate limit is spent: retry after the wait given"
		case resp.StatusCode >= 500:
			msg += "; Linear failed to answer: try again shortly"
		}
		e := providers.StatusError(providerName, resp, "", msg)
		if e.Code == switchboard.CodeRateLimited && e.RetryAfter == 0 {
			e.RetryAfter = resetWait(resp.Header)
		}
		return e
	}
	if jsonErr != nil || len(r.Data) == 0 || string(r.Data) == "null" {
		return &providers.UpstreamError{Provider: providerName, Status: resp.StatusCode, Code: switchboard.CodeUpstream,
			Reason: "invalid_response", Message: "Linear answered without data; try again shortly"}
	}
	if err := json.Unmarshal(r.Data, out); err != nil {
		return &providers.UpstreamError{Provider: providerName, Status: resp.StatusCode, Code: switchboard.CodeUpstream,
			Reason: "invalid_response", Message: fmt.Sprintf("Linear's answer to %s has an unexpected shape: %v", operation, err)}
	}
	return nil
}

// graphQLError classifies a GraphQL answer's first error by its extensions code
// (Linear answers most of them with HTTP 400, some with 200 and partial data) and
// keeps every message.
func graphQLError(resp *http.Response, errs []gqlError) error {
	first := errs[0]
	code := first.Extensions.Code
	e := &providers.UpstreamError{Provider: providerName, Status: resp.StatusCode, Code: switchboard.CodeUpstream, Reason: code}
	var msgs []string
	for _, ge := range errs {
		m := ge.Message
		if ge.Extensions.UserPresentableMessage != "" && ge.Extensions.UserPresentableMessage != m {
			m += " (" + ge.Extensions.UserPresentableMessage + ")"
		}
		msgs = append(msgs, m)
	}
	msg := strings.Join(msgs, "; ")
	lower := strings.ToLower(first.Message + " " + first.Extensions.Type)
	switch {
	case code == "RATELIMITED":
		e.Code = switchboard.CodeRateLimited
		e.RetryAfter = resetWait(resp.Header)
		msg += "; Linear's rate limit is spent: retry after the wait given"
	case code == "AUTHENTICATION_ERROR" || first.Extensions.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusUnauthorized:
		e.Code = switchboard.CodeReconnect
		msg += "; Linear no longer accepts this connection's credential (revoked or expired): reconnect Linear"
	case code == "FORBIDDEN" || first.Extensions.StatusCode == http.StatusForbidden:
		e.Code = switchboard.CodeForbidden
		msg += "; this connection may not do that (a write needs the write scope, or the team is private)"
	case strings.Contains(lower, "entity not found") || strings.Contains(lower, "not found"):
		e.Code = switchboard.CodeNotFound
		msg += "; check the ID or identifier (e.g. ENG-123) and that this account can see it"
	case code == "INVALID_INPUT" || code == "GRAPHQL_VALIDATION_FAILED" || code == "BAD_USER_INPUT" || first.Extensions.StatusCode == http.StatusBadRequest:
		e.Code = switchboard.CodeInvalid
	case code == "INTERNAL_SERVER_ERROR" || resp.StatusCode >= 500:
		e.Code = switchboard.CodeUpstream
		msg += "; Linear failed to answer: try again shortly"
	default:
		if resp.StatusCode >= 400 {
			e.Code = providers.CodeForStatus(resp.StatusCode)
		}
	}
	e.Message = msg
	return e
}

// resetWait reads how long Linear asks a client to wait: Retry-After, or the time until
// the spent window resets (X-RateLimit-Requests-Reset or X-RateLimit-Complexity-Reset,
// epoch milliseconds).
func resetWait(h http.Header) time.Duration {
	if wait, limited := providers.RateLimitWait(h, time.Now()); limited {
		return wait
	}
	var longest time.Duration
	for _, name := range []string{"X-RateLimit-Requests-Reset", "X-RateLimit-Complexity-Reset", "X-RateLimit-Endpoint-Requests-Reset"} {
		ms, err := strconv.ParseInt(h.Get(name), 10, 64)
		if err != nil {
			continue
		}
		longest = max(longest, time.Until(time.UnixMilli(ms)).Round(time.Second))
	}
	return longest
}

// Page sizes: the default and Linear's maximum for first.
const (
	defaultPageSize = 30
	maxPageSize     = 100
)

// pageVars sets first and after from the hub's page input.
func pageVars(vars map[string]any, p providers.PageInput) error {
	size := p.LimitOr(defaultPageSize)
	if size < 1 || size > maxPageSize {
		return switchboard.Invalid("limit", fmt.Sprintf("must be between 1 and %d", maxPageSize))
	}
	after, err := p.DecodedCursor()
	if err != nil {
		return err
	}
	vars["first"] = size
	if after != "" {
		vars["after"] = after
	}
	return nil
}

// pageInfo is a Relay connection's page info.
type pageInfo struct {
	HasNextPage bool   `json:"hasNextPage"`
	EndCursor   string `json:"endCursor"`
}

// next returns the opaque next_cursor, "" on the last page.
func (p pageInfo) next() string {
	if !p.HasNextPage {
		return ""
	}
	return providers.EncodeCursor(p.EndCursor)
}

var (
	uuidPattern       = regexp.MustCompile(`^(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	identifierPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,9}-[1-9][0-9]{0,8}$`)
	teamKeyPattern    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,9}$`)
)

// checkIssueRef accepts an issue's UUID or its identifier (ENG-123).
func checkIssueRef(field, v string) (string, error) {
	v = strings.TrimSpace(v)
	if !uuidPattern.MatchString(v) && !identifierPattern.MatchString(v) {
		return "", switchboard.Invalid(field, "must be an issue identifier such as ENG-123, or an issue ID (UUID)")
	}
	if identifierPattern.MatchString(v) {
		return strings.ToUpper(v), nil
	}
	return strings.ToLower(v), nil
}

// checkUUID accepts a Linear ID.
func checkUUID(field, v string) error {
	if !uuidPattern.MatchString(strings.TrimSpace(v)) {
		return switchboard.Invalid(field, "must be a Linear ID (a UUID such as 9cfb482a-81e3-4154-b5b9-2c805e70a02d); list_teams and list_projects give them")
	}
	return nil
}
