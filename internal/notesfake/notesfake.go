// Package notesfake is a small provider for tests of what runs tool calls (runs, MCP
// confirmations): "notes", whose operations reach an httptest upstream that answers
// like a REST API (201, 200, 204, 404, 429 with Retry-After) and records every
// request it received.
//
// Start from [Spec] (the provider) and [Upstream] (the fake API its operations reach).
package notesfake

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
)

// Request is one request the upstream received.
type Request struct {
	Method string
	Path   string
	Auth   string
	Body   string
}

// Upstream is the notes API: notes by id, a gate that holds GET /wait until released,
// and the log of requests.
type Upstream struct {
	Server *httptest.Server

	mu       sync.Mutex
	notes    map[string]string
	next     int
	requests []Request
	// Gate, when not nil, holds every GET /wait until it is closed (or gets a value).
	gate    chan struct{}
	waiting chan struct{} // receives one value per request held at the gate
}

// New starts the upstream; it stops when the test ends.
func New(t testing.TB) *Upstream {
	t.Helper()
	u := &Upstream{notes: map[string]string{}, gate: make(chan struct{}), waiting: make(chan struct{}, 64)}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(func() {
		u.Release()
		u.Server.Close()
	})
	return u
}

// Release lets every held and later GET /wait through.
func (u *Upstream) Release() {
	u.mu.Lock()
	defer u.mu.Unlock()
	select {
	case <-u.gate:
	default:
		close(u.gate)
	}
}

// Waiting receives a value each time a GET /wait starts waiting at the gate.
func (u *Upstream) Waiting() <-chan struct{} { return u.waiting }

// Requests returns the requests received so far.
func (u *Upstream) Requests() []Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]Request(nil), u.requests...)
}

// Put stores a note and returns its id.
func (u *Upstream) Put(text string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.next++
	id := fmt.Sprintf("n%d", u.next)
	u.notes[id] = text
	return id
}

// Has reports whether a note exists.
func (u *Upstream) Has(id string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	_, ok := u.notes[id]
	return ok
}

func (u *Upstream) serve(w http.ResponseWriter, r *http.Request) {
	var body strings.Builder
	if r.Body != nil {
		buf := make([]byte, 4096)
		n, _ := r.Body.Read(buf)
		body.Write(buf[:n])
	}
	u.mu.Lock()
	u.requests = append(u.requests, Request{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: body.String()})
	gate := u.gate
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+Token {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"bad credentials"}`))
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/wait":
		select { // a test that stopped reading Waiting must not hold the handler (and Close)
		case u.waiting <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write([]byte(`{"text":"waited"}`))
	case r.Method == http.MethodGet && r.URL.Path == "/limited":
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"message":"slow down"}`))
	case r.Method == http.MethodPost && r.URL.Path == "/notes":
		var in struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(body.String()), &in); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"message":"body is not JSON"}`))
			return
		}
		id := u.Put(in.Text)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]string{"id": id, "text": in.Text})
	case strings.HasPrefix(r.URL.Path, "/notes/"):
		id := strings.TrimPrefix(r.URL.Path, "/notes/")
		u.mu.Lock()
		text, ok := u.notes[id]
		if ok && r.Method == http.MethodDelete {
			delete(u.notes, id)
		}
		u.mu.Unlock()
		switch {
		case !ok:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"message":"no such note"}`))
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		default:
			_ = json.NewEncoder(w).Encode(map[string]string{"id": id, "text": text})
		}
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message":"no such endpoint"}`))
	}
}

// Token is the access token the upstream accepts.
const Token = "notes-token-1"

// NoteID names a note.
type NoteID struct {
	ID string `json:"id" jsonschema:"The note's id"`
}

// Note is a note.
type Note struct {
	ID   string `json:"id" jsonschema:"The note's id"`
	Text string `json:"text" jsonschema:"The note's text"`
}

// NewNote is the text of a note to create.
type NewNote struct {
	Text string `json:"text" jsonschema:"The note's text"`
}

// Deleted is what delete_note answers.
type Deleted struct {
	Deleted bool `json:"deleted" jsonschema:"Whether the note was deleted"`
}

// Waited is what wait answers.
type Waited struct {
	Text string `json:"text" jsonschema:"What the upstream said"`
}

// Empty is an input without arguments.
type Empty struct{}

// Spec is the notes provider, reaching the upstream at baseURL. Its tools are
// notes_get_note (read-only), notes_create_note (neither idempotent nor destructive),
// notes_delete_note (destructive, idempotent), notes_wait (read-only; waits at the
// gate) and notes_limited (read-only; always rate limited).
func Spec(baseURL string) providers.Spec {
	do := func(ctx context.Context, c *providers.Call, method, path string, body any, out any, want int) error {
		var payload *strings.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			payload = strings.NewReader(string(b))
		} else {
			payload = strings.NewReader("")
		}
		req, err := http.NewRequestWithContext(ctx, method, c.URL(path), payload)
		if err != nil {
			return err
		}
		resp, err := c.HTTP.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != want {
			var e struct {
				Message string `json:"message"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&e)
			return providers.StatusError("notes", resp, "", e.Message)
		}
		if out == nil {
			return nil
		}
		return json.NewDecoder(resp.Body).Decode(out)
	}
	get := &providers.Operation[NoteID, Note]{
		Name: "get_note", Title: "Get note", Description: "Read a note.",
		Hints: providers.Hints{ReadOnly: true, Idempotent: true},
		Run: func(ctx context.Context, c *providers.Call, in NoteID) (Note, error) {
			var out Note
			return out, do(ctx, c, http.MethodGet, "/notes/"+in.ID, nil, &out, http.StatusOK)
		},
	}
	create := &providers.Operation[NewNote, Note]{
		Name: "create_note", Title: "Create note", Description: "Create a note.",
		Run: func(ctx context.Context, c *providers.Call, in NewNote) (Note, error) {
			var out Note
			return out, do(ctx, c, http.MethodPost, "/notes", in, &out, http.StatusCreated)
		},
	}
	del := &providers.Operation[NoteID, Deleted]{
		Name: "delete_note", Title: "Delete note", Description: "Delete a note for good.",
		Hints: providers.Hints{Destructive: true, Idempotent: true},
		Run: func(ctx context.Context, c *providers.Call, in NoteID) (Deleted, error) {
			return Deleted{Deleted: true}, do(ctx, c, http.MethodDelete, "/notes/"+in.ID, nil, nil, http.StatusNoContent)
		},
	}
	wait := &providers.Operation[Empty, Waited]{
		Name: "wait", Title: "Wait", Description: "Wait until the upstream answers.",
		Hints: providers.Hints{ReadOnly: true, Idempotent: true},
		Run: func(ctx context.Context, c *providers.Call, _ Empty) (Waited, error) {
			var out Waited
			return out, do(ctx, c, http.MethodGet, "/wait", nil, &out, http.StatusOK)
		},
	}
	limited := &providers.Operation[Empty, Waited]{
		Name: "limited", Title: "Limited", Description: "Always rate limited.",
		Hints: providers.Hints{ReadOnly: true, Idempotent: true},
		Run: func(ctx context.Context, c *providers.Call, _ Empty) (Waited, error) {
			var out Waited
			return out, do(ctx, c, http.MethodGet, "/limited", nil, &out, http.StatusOK)
		},
	}
	return providers.Spec{
		Name: "notes", Title: "Notes", BaseURL: baseURL, AuthKinds: []providers.AuthKind{providers.AuthAPIKey},
		RateLimit: providers.RateLimit{PerSecond: 1000, Burst: 1000},
		Verify: func(context.Context, *providers.Call) (providers.Account, error) {
			return providers.Account{ID: "acct-1", Label: "notes-account"}, nil
		},
		Operations: []providers.Op{get, create, del, wait, limited},
	}
}
