package github

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// providerName is the name GitHub's errors carry.
const providerName = "github"

// maxResponseBytes bounds what one response may hold; the largest expected is a file's
// contents (1 MiB of text, base64-encoded) or a directory of 1,000 entries.
const maxResponseBytes = 8 << 20

// maxErrorBytes bounds how much of a failed response is read for its message.
const maxErrorBytes = 64 << 10

// secondaryRateLimitWait is how long GitHub asks a client to wait after a secondary
// rate limit that came without Retry-After ("wait at least one minute").
// https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit
const secondaryRateLimitWait = time.Minute

// request is one call to the GitHub REST API. path starts with "/" and is joined to the
// Call's base URL, so GitHub Enterprise Server (https://HOST/api/v3) works unchanged;
// build it with repoPath so every segment is escaped.
type request struct {
	method string
	path   string
	query  url.Values
	body   any // encoded as JSON when not nil
}

// do sends the request and decodes a successful JSON answer into out (when not nil).
// It returns the response headers (for Link pagination and X-OAuth-Scopes). A failed
// answer is an *providers.UpstreamError, possibly wrapped in an invalid
// *switchboard.Error naming the field GitHub rejected.
func (r request) do(ctx context.Context, c *providers.Call, out any) (http.Header, error) {
	h, _, err := r.send(ctx, c, out)
	return h, err
}

// doStatus is do for answers whose success status carries meaning (202 against 205).
func (r request) doStatus(ctx context.Context, c *providers.Call, out any) (int, error) {
	_, status, err := r.send(ctx, c, out)
	return status, err
}

// send is do, returning the status too. An empty 202, 204 or 205 answer leaves out as it is.
func (r request) send(ctx context.Context, c *providers.Call, out any) (http.Header, int, error) {
	a, err := providers.JSONRequest{
		Provider: providerName, Title: "GitHub", Method: r.method, Path: r.path, Query: r.query, Body: r.body,
		MaxBytes: maxResponseBytes, TooLarge: "narrow the request",
	}.Send(ctx, c, out, errorFrom)
	return a.Header, a.Status, err
}

// apiError is GitHub's error body.
// https://docs.github.com/rest/using-the-rest-api/troubleshooting-the-rest-api
type apiError struct {
	Message          string `json:"message"`
	DocumentationURL string `json:"documentation_url"`
	Errors           []struct {
		Resource string `json:"resource"`
		Field    string `json:"field"`
		Code     string `json:"code"`
		Message  string `json:"message"`
	} `json:"errors"`
}

// errorFrom classifies a failed GitHub answer so that an agent can act on it.
func errorFrom(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	var body apiError
	if json.Unmarshal(data, &body) != nil || body.Message == "" {
		// Not GitHub's JSON (an HTML page from a proxy, say): its text helps no one.
		body.Message = http.StatusText(resp.StatusCode)
	}
	e := providers.StatusError(providerName, resp, "", "")
	msg := body.Message
	var field string
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		e.Code = switchboard.CodeReconnect
		msg += "; GitHub no longer accepts this connection's token (revoked, expired or wrong): reconnect the GitHub connection"
	case e.Code == switchboard.CodeRateLimited:
		msg += "; GitHub's rate limit for this token is spent: retry after the wait given"
	case isSecondaryRateLimit(resp, body.Message):
		e.Code = switchboard.CodeRateLimited
		if e.RetryAfter == 0 {
			e.RetryAfter = secondaryRateLimitWait
		}
		msg += "; GitHub's secondary rate limit was hit (too many requests at once or too fast): slow down and retry after the wait given"
	case resp.StatusCode == http.StatusForbidden:
		msg += "; the token lacks the permission or scope this needs"
		if have, want := resp.Header.Get("X-OAuth-Scopes"), resp.Header.Get("X-Accepted-OAuth-Scopes"); want != "" {
			msg += fmt.Sprintf(" (token scopes: %q; GitHub accepts: %q)", have, want)
		}
	case resp.StatusCode == http.StatusNotFound:
		msg += "; check owner, repo and number, and note that GitHub answers 404 for a private repository the token cannot see: the token may lack access to it"
	case resp.StatusCode == http.StatusUnprocessableEntity:
		e.Code = switchboard.CodeInvalid
		var details []string
		for _, fe := range body.Errors {
			if field == "" && fe.Field != "" {
				field = fe.Field
			}
			if e.Reason == "" && fe.Code != "" {
				e.Reason = fe.Code
			}
			details = append(details, describeFieldError(fe.Resource, fe.Field, fe.Code, fe.Message))
		}
		if len(details) > 0 {
			msg += ": " + strings.Join(details, "; ")
		}
	}
	if body.DocumentationURL != "" {
		msg += " (see " + body.DocumentationURL + ")"
	}
	e.Message = msg
	if field != "" {
		return &switchboard.Error{Code: switchboard.CodeInvalid, Field: field, Message: msg, Err: e}
	}
	return e
}

// describeFieldError renders one entry of a 422's errors[].
func describeFieldError(resource, field, code, message string) string {
	var parts []string
	if field != "" {
		parts = append(parts, field)
	} else if resource != "" {
		parts = append(parts, resource)
	}
	if code != "" && code != "custom" {
		parts = append(parts, code)
	}
	s := strings.Join(parts, " ")
	if message != "" {
		if s != "" {
			s += ": "
		}
		s += message
	}
	return s
}

// isSecondaryRateLimit reports whether a 403 or 429 is GitHub's secondary rate limit.
func isSecondaryRateLimit(resp *http.Response, message string) bool {
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		return false
	}
	return resp.Header.Get("Retry-After") != "" || strings.Contains(strings.ToLower(message), "secondary rate limit")
}

// repoPath builds /repos/{owner}/{repo}{/rest…} with every segment escaped. It refuses
// owners and repositories that could not be GitHub names, so no input can steer the
// request to another path.
func repoPath(owner, repo string, rest ...string) (string, error) {
	if err := checkName("owner", owner); err != nil {
		return "", err
	}
	if err := checkName("repo", repo); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("/repos/")
	b.WriteString(url.PathEscape(owner))
	b.WriteString("/")
	b.WriteString(url.PathEscape(repo))
	for _, s := range rest {
		b.WriteString("/")
		b.WriteString(url.PathEscape(s))
	}
	return b.String(), nil
}

// checkName refuses an empty owner or repository name, one holding a slash, or a dot
// segment.
func checkName(field, v string) error {
	switch {
	case v == "":
		return switchboard.Invalid(field, "is required")
	case v == "." || v == "..":
		return switchboard.Invalid(field, "is not a GitHub name")
	case strings.ContainsAny(v, "/\\?#%") || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }):
		return switchboard.Invalid(field, "must be a bare GitHub name without slashes or spaces, e.g. octocat or Hello-World")
	}
	return nil
}

// checkNumber refuses an issue or pull request number below 1.
func checkNumber(field string, n int) error {
	if n < 1 {
		return switchboard.Invalid(field, "must be a positive issue or pull request number")
	}
	return nil
}

// pageQuery starts a list's query: per_page from the limit (GitHub's maximum is 100)
// on the first page; on later pages page and per_page from the cursor, whatever the
// limit says, because GitHub numbers pages in units of per_page and another size would
// skip or repeat items.
func pageQuery(p providers.PageInput) (url.Values, error) {
	limit := p.LimitOr(defaultPageSize)
	if limit < 1 || limit > maxPageSize {
		return nil, switchboard.Invalid("limit", fmt.Sprintf("must be between 1 and %d", maxPageSize))
	}
	q := url.Values{"per_page": {strconv.Itoa(limit)}}
	pos, err := p.DecodedCursor()
	if err != nil {
		return nil, err
	}
	if pos != "" {
		page, perPage, ok := parsePosition(pos)
		if !ok {
			return nil, switchboard.Invalid("cursor", "is not a cursor this tool returned; pass next_cursor from the previous page, or omit it")
		}
		q.Set("page", strconv.Itoa(page))
		q.Set("per_page", strconv.Itoa(perPage))
	}
	return q, nil
}

// Page sizes: GitHub's default and its maximum per_page.
const (
	defaultPageSize = 30
	maxPageSize     = 100
)

// nextCursor turns the Link header's rel="next" into the opaque next_cursor, which
// holds the next page number and the per_page of the request sent (query), or "" on
// the last page.
func nextCursor(h http.Header, query url.Values) string {
	next := providers.NextLink(h)
	if next == "" {
		return ""
	}
	u, err := url.Parse(next)
	if err != nil {
		return ""
	}
	page, err := strconv.Atoi(u.Query().Get("page"))
	if err != nil || page < 2 {
		return ""
	}
	perPage, err := strconv.Atoi(query.Get("per_page"))
	if err != nil || perPage < 1 || perPage > maxPageSize {
		return ""
	}
	return providers.EncodeCursor(position(page, perPage))
}

// position is what a cursor holds: "page=P&per_page=N".
func position(page, perPage int) string {
	return url.Values{"page": {strconv.Itoa(page)}, "per_page": {strconv.Itoa(perPage)}}.Encode()
}

// parsePosition reads a position back, refusing anything position did not write.
func parsePosition(pos string) (page, perPage int, ok bool) {
	v, err := url.ParseQuery(pos)
	if err != nil || len(v) != 2 || len(v["page"]) != 1 || len(v["per_page"]) != 1 {
		return 0, 0, false
	}
	page, err1 := strconv.Atoi(v.Get("page"))
	perPage, err2 := strconv.Atoi(v.Get("per_page"))
	if err1 != nil || err2 != nil || page < 2 || perPage < 1 || perPage > maxPageSize || position(page, perPage) != pos {
		return 0, 0, false
	}
	return page, perPage, true
}

// setOpt sets a query parameter when the optional value is given.
func setOpt(q url.Values, key string, v *string) {
	if v != nil && *v != "" {
		q.Set(key, *v)
	}
}

// decodeRaw decodes a kept answer; a shape GitHub does not document is an upstream error.
func decodeRaw(raw json.RawMessage, out any) error {
	if err := json.Unmarshal(raw, out); err != nil {
		return &providers.UpstreamError{Provider: providerName, Status: http.StatusOK, Code: switchboard.CodeUpstream,
			Message: "the answer is not the JSON GitHub documents: " + err.Error()}
	}
	return nil
}

// location sends a GET that GitHub answers with a redirect (302) to a short-lived
// download URL, and returns that URL without following it: the redirect is not
// followed so that nothing is downloaded and the token is never sent to the storage
// host. The client is a copy of the Call's that shares its transport (credentials,
// rate limit, retries) and differs only in its redirect policy.
func (r request) location(ctx context.Context, c *providers.Call) (string, error) {
	u := c.URL(r.path)
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, nil)
	if err != nil {
		return "", fmt.Errorf("build github %s %s: %w", r.method, r.path, err)
	}
	hc := *c.HTTP
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("github %s %s: %w", r.method, r.path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return "", errorFrom(resp)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBytes))
	loc := resp.Header.Get("Location")
	if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
		return "", &providers.UpstreamError{Provider: providerName, Status: resp.StatusCode, Code: switchboard.CodeUpstream,
			Message: "GitHub answered without the redirect to a download URL it documents"}
	}
	return loc, nil
}
