package connections_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers"
)

// fakeUpstream answers GET /whoami like GitHub's GET /user: the account for a known
// token, 401 {"message":"Bad credentials"} otherwise. It keeps the Authorization
// header of every request it got.
type fakeUpstream struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

const goodToken = "fake_good_token_123"

func newFakeUpstream(t *testing.T) *fakeUpstream {
	f := &fakeUpstream{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.auths = append(f.auths, r.Header.Get("Authorization"))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodGet || r.URL.Path != "/whoami" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"Not Found"}`)
			return
		}
		switch r.Header.Get("Authorization") {
		case "Bearer fake_wrong_base": // what a host that is not the API answers
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"message":"Not Found"}`)
			return
		case "Bearer fake_not_acceptable":
			w.WriteHeader(http.StatusNotAcceptable)
			fmt.Fprint(w, `{"message":"Unsupported 'Accept' header"}`)
			return
		case "Bearer fake_forbidden":
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"message":"Resource not accessible by personal access token"}`)
			return
		}
		if r.Header.Get("Authorization") == "Bearer fake_rate_limited" {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"message":"API rate limit exceeded"}`)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+goodToken {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"message":"Bad credentials"}`)
			return
		}
		fmt.Fprint(w, `{"id":"42","login":"octocat","scopes":["repo","read:org"]}`)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeUpstream) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.auths...)
}

// fakeSpec is a provider whose Verify calls GET /whoami with the Call's client.
func fakeSpec(name string, kinds ...providers.AuthKind) providers.Spec {
	return providers.Spec{
		Name:      name,
		Title:     "Fake",
		BaseURL:   "https://fake.invalid", // the registry's override must win
		AuthKinds: kinds,
		TokenHelp: "Paste a fake token.",
		CheckToken: func(token string) error {
			if strings.ContainsAny(token, " \t\n") {
				return switchboard.Invalid("token", "must be one word, as Fake shows it")
			}
			return nil
		},
		Verify: func(ctx context.Context, c *providers.Call) (providers.Account, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL("/whoami"), nil)
			if err != nil {
				return providers.Account{}, err
			}
			resp, err := c.HTTP.Do(req)
			if err != nil {
				return providers.Account{}, err
			}
			defer resp.Body.Close()
			var body struct {
				ID      string   `json:"id"`
				Login   string   `json:"login"`
				Scopes  []string `json:"scopes"`
				Message string   `json:"message"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				return providers.Account{}, err
			}
			if resp.StatusCode != http.StatusOK {
				return providers.Account{}, providers.StatusError(name, resp, "", body.Message)
			}
			return providers.Account{ID: body.ID, Label: body.Login, Scopes: body.Scopes}, nil
		},
	}
}

type serviceRig struct {
	*world
	svc      *connections.Service
	upstream *fakeUpstream
	audit    *audit.Writer
	mu       sync.Mutex
	notified []string
}

func newServiceRig(t *testing.T, db *gorm.DB) *serviceRig {
	t.Helper()
	r := &serviceRig{world: newWorld(t, db), upstream: newFakeUpstream(t)}
	reg := providers.NewRegistry()
	own := providers.Spec{Name: "own", Title: "Own tools", AuthKinds: []providers.AuthKind{providers.AuthAPIKey},
		Tools: func(context.Context, providers.Connection) ([]*providers.Tool, error) { return nil, nil }}
	for _, s := range []providers.Spec{fakeSpec("fake", providers.AuthAPIKey), fakeSpec("oauthonly", providers.AuthOAuth2), own} {
		if err := reg.Register(s); err != nil {
			t.Fatal(err)
		}
		if err := reg.SetBaseURL(s.Name, r.upstream.URL); err != nil {
			t.Fatal(err)
		}
	}
	r.audit = audit.NewWriter(db, audit.WriterOptions{})
	t.Cleanup(func() { _ = r.audit.Close(context.Background()) })
	r.svc = connections.NewService(r.store, reg, &providers.Transports{}, r.audit)
	r.svc.Subscribe(func(tenant switchboard.TenantID, id string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.notified = append(r.notified, string(tenant)+"/"+id)
	})
	return r
}

func (r *serviceRig) notifications() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.notified...)
}

func (r *serviceRig) events(t *testing.T, tenant switchboard.TenantID) []audit.Event {
	t.Helper()
	if err := r.audit.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	es, _, err := audit.NewStore(r.db).List(context.Background(), tenant, audit.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func TestConnect(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		label := "  "
		tests := []struct {
			name      string
			in        connections.ConnectInput
			code      switchboard.Code // the error code expected, "" for success
			field     string           // the field named by the error
			reason    string           // what the error message must say
			upstreamN int              // requests the fake must have received
		}{
			{name: "good token", in: connections.ConnectInput{Provider: "fake", Token: goodToken, Shared: true}, upstreamN: 1},
			{name: "rejected token", in: connections.ConnectInput{Provider: "fake", Token: "fake_revoked"}, code: switchboard.CodeInvalid, field: "token", reason: "Bad credentials", upstreamN: 1},
			{name: "token forbidden", in: connections.ConnectInput{Provider: "fake", Token: "fake_forbidden"}, code: switchboard.CodeInvalid, field: "token", reason: "Fake refused this token: Resource not accessible", upstreamN: 1},
			{name: "404: not the API", in: connections.ConnectInput{Provider: "fake", Token: "fake_wrong_base"}, code: switchboard.CodeUpstream, reason: "fake answered HTTP 404 Not Found when Switchboard asked whose token this is, so the token was not checked: check that http://127.0.0.1", upstreamN: 1},
			{name: "406 names the base URL", in: connections.ConnectInput{Provider: "fake", Token: "fake_not_acceptable"}, code: switchboard.CodeUpstream, reason: "is Fake's API (SWITCHBOARD_FAKE_BASE_URL)", upstreamN: 1},
			{name: "rate limited while checking", in: connections.ConnectInput{Provider: "fake", Token: "fake_rate_limited"}, code: switchboard.CodeRateLimited, reason: "rate limiting", upstreamN: 1},
			{name: "unknown provider", in: connections.ConnectInput{Provider: "gitlab", Token: goodToken}, code: switchboard.CodeInvalid, field: "provider", reason: "known providers: fake, oauthonly"},
			{name: "provider whose tools exist per connection", in: connections.ConnectInput{Provider: "own", Token: goodToken}, code: switchboard.CodeInvalid, field: "provider", reason: "known providers: fake, oauthonly"},
			{name: "token not in its form", in: connections.ConnectInput{Provider: "fake", Token: "fake good"}, code: switchboard.CodeInvalid, field: "token", reason: "one word"},
			{name: "empty token", in: connections.ConnectInput{Provider: "fake", Token: " "}, code: switchboard.CodeInvalid, field: "token", reason: "Paste a fake token."},
			{name: "provider without api keys", in: connections.ConnectInput{Provider: "oauthonly", Token: goodToken}, code: switchboard.CodeInvalid, field: "provider", reason: "OAuth"},
			{name: "blank label", in: connections.ConnectInput{Provider: "fake", Token: goodToken, Label: &label}, code: switchboard.CodeInvalid, field: "label", reason: "1 to 255"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				r := newServiceRig(t, db)
				p := r.a.bob
				before, err := r.store.List(ctx, p.TenantID)
				if err != nil {
					t.Fatal(err)
				}
				c, err := r.svc.Connect(ctx, p, tt.in)
				if n := len(r.upstream.received()); n != tt.upstreamN {
					t.Errorf("upstream got %d requests, want %d", n, tt.upstreamN)
				}
				for _, auth := range r.upstream.received() {
					if want := "Bearer " + strings.TrimSpace(tt.in.Token); auth != want {
						t.Errorf("upstream got Authorization %q, want %q", auth, want)
					}
				}
				after, lerr := r.store.List(ctx, p.TenantID)
				if lerr != nil {
					t.Fatal(lerr)
				}
				if tt.code != "" {
					e := switchboard.AsError(err)
					if err == nil || e.Code != tt.code || e.Field != tt.field || !strings.Contains(e.Message, tt.reason) {
						t.Fatalf("err = %v, want %s %q saying %q", err, tt.code, tt.field, tt.reason)
					}
					if strings.Contains(err.Error(), tt.in.Token) && strings.TrimSpace(tt.in.Token) != "" {
						t.Errorf("error %q repeats the token", err)
					}
					if len(after) != len(before) {
						t.Errorf("%d connections stored, want none", len(after)-len(before))
					}
					if n := r.notifications(); len(n) != 0 {
						t.Errorf("subscribers notified %v, want nothing", n)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				want := connections.Connection{ID: c.ID, TenantID: p.TenantID, OwnerUserID: p.UserID, Provider: "fake", AuthKind: providers.AuthAPIKey, AccountID: "42", AccountLabel: "octocat", Scopes: "repo read:org", Shared: true, Status: connections.StatusActive, Version: 1}
				got, creds, err := r.store.Open(ctx, p.TenantID, c.ID)
				if err != nil {
					t.Fatal(err)
				}
				ignore := func(c connections.Connection) connections.Connection {
					c.Sealed, c.KeyID, c.CreatedAt, c.UpdatedAt = nil, "", c.CreatedAt.UTC().Truncate(0), c.UpdatedAt.UTC().Truncate(0)
					return c
				}
				want.CreatedAt, want.UpdatedAt = got.CreatedAt.UTC(), got.UpdatedAt.UTC()
				if diff := cmp.Diff(ignore(want), ignore(got)); diff != "" {
					t.Errorf("stored connection (-want +got):\n%s", diff)
				}
				if creds.AccessToken != goodToken {
					t.Errorf("stored token = %q, want the one given", creds.AccessToken)
				}
				if diff := cmp.Diff([]string{string(p.TenantID) + "/" + c.ID}, r.notifications()); diff != "" {
					t.Errorf("notifications (-want +got):\n%s", diff)
				}
				var created []audit.Event
				for _, e := range r.events(t, p.TenantID) {
					if e.Kind == audit.KindConnectionCreated && e.ConnectionID == c.ID {
						created = append(created, e)
					}
				}
				if len(created) != 1 || created[0].Principal != p.ID() || created[0].Outcome != "ok" || strings.Contains(created[0].Detail, goodToken) {
					t.Errorf("audit events for the connection: %+v, want one ok event by %s without the token", created, p.ID())
				}
			})
		}
	})
}

func TestServiceVisibilityAndDelete(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		r := newServiceRig(t, db)
		lists := []struct {
			name string
			p    switchboard.Principal
			want []string
		}{
			{name: "admin sees all of the tenant", p: r.a.admin, want: []string{r.a.annPrivate.ID, r.a.share.ID}},
			{name: "owner sees own and shared", p: r.a.ann, want: []string{r.a.annPrivate.ID, r.a.share.ID}},
			{name: "member sees shared", p: r.a.bob, want: []string{r.a.share.ID}},
			{name: "B's admin sees only B's", p: r.b.admin, want: []string{r.b.annPrivate.ID, r.b.share.ID}},
		}
		for _, tt := range lists {
			t.Run("List: "+tt.name, func(t *testing.T) {
				got, err := r.svc.List(ctx, tt.p)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, ids(got)); diff != "" {
					t.Errorf("list (-want +got):\n%s", diff)
				}
			})
		}
		agent := r.a.ann
		agent.Kind, agent.AgentID = switchboard.PrincipalAgent, "agt_1"
		deletes := []struct {
			name string
			p    switchboard.Principal
			id   string
			code switchboard.Code
		}{
			{name: "B's admin deletes A's", p: r.b.admin, id: r.a.share.ID, code: switchboard.CodeNotFound},
			{name: "member deletes another's private", p: r.a.bob, id: r.a.annPrivate.ID, code: switchboard.CodeNotFound},
			{name: "member deletes another's shared", p: r.a.bob, id: r.a.share.ID, code: switchboard.CodeForbidden},
			{name: "agent deletes its user's", p: agent, id: r.a.annPrivate.ID, code: switchboard.CodeForbidden},
			{name: "owner deletes own", p: r.a.ann, id: r.a.annPrivate.ID},
			{name: "admin deletes another's shared", p: r.a.admin, id: r.a.share.ID},
		}
		for _, tt := range deletes {
			t.Run("Delete: "+tt.name, func(t *testing.T) {
				err := r.svc.Delete(ctx, tt.p, tt.id)
				if switchboard.CodeOf(err) != tt.code {
					t.Fatalf("err = %v, want code %q", err, tt.code)
				}
				_, gerr := r.store.Get(ctx, r.a.id, tt.id)
				if deleted := switchboard.CodeOf(gerr) == switchboard.CodeNotFound; deleted != (tt.code == "") {
					t.Errorf("deleted = %v after %v", deleted, err)
				}
			})
		}
		want := []string{string(r.a.id) + "/" + r.a.annPrivate.ID, string(r.a.id) + "/" + r.a.share.ID}
		if diff := cmp.Diff(want, r.notifications()); diff != "" {
			t.Errorf("notifications (-want +got):\n%s", diff)
		}
		var deleted []string
		for _, e := range r.events(t, r.a.id) {
			if e.Kind == audit.KindConnectionDeleted {
				deleted = append(deleted, e.Principal+" "+e.ConnectionID)
			}
		}
		wantEvents := []string{r.a.admin.ID() + " " + r.a.share.ID, r.a.ann.ID() + " " + r.a.annPrivate.ID}
		if diff := cmp.Diff(wantEvents, deleted); diff != "" {
			t.Errorf("deletion events, newest first (-want +got):\n%s", diff)
		}
	})
}

func TestMarkNeedsReconnect(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ctx := context.Background()
		r := newServiceRig(t, db)
		p := r.a.bob
		c, err := r.svc.Connect(ctx, p, connections.ConnectInput{Provider: "fake", Token: goodToken})
		if err != nil {
			t.Fatal(err)
		}
		notifiedBefore := len(r.notifications())
		// A stale version (the connection changed since the call read it) marks nothing.
		if err := r.svc.MarkNeedsReconnect(ctx, p, c.ID, c.Version+7); err != nil {
			t.Fatal(err)
		}
		if got, _ := r.store.Get(ctx, p.TenantID, c.ID); got.Status != connections.StatusActive {
			t.Errorf("status after a stale mark = %s, want active", got.Status)
		}
		// Another tenant's principal marks nothing either.
		if err := r.svc.MarkNeedsReconnect(ctx, r.b.bob, c.ID, c.Version); err != nil {
			t.Fatal(err)
		}
		if got, _ := r.store.Get(ctx, p.TenantID, c.ID); got.Status != connections.StatusActive {
			t.Errorf("status after another tenant's mark = %s, want active", got.Status)
		}
		if err := r.svc.MarkNeedsReconnect(ctx, p, c.ID, c.Version); err != nil {
			t.Fatal(err)
		}
		got, err := r.store.Get(ctx, p.TenantID, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != connections.StatusNeedsReconnect || got.Version != c.Version+1 {
			t.Errorf("after the mark: status %s version %d, want needs_reconnect version %d", got.Status, got.Version, c.Version+1)
		}
		usable, err := r.svc.Usable(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		// Still listed (its tools stay, marked), with its new status.
		found := false
		for _, u := range usable {
			if u.ID == c.ID {
				found = true
				if u.Status != connections.StatusNeedsReconnect {
					t.Errorf("usable status = %s, want needs_reconnect", u.Status)
				}
			}
		}
		if !found {
			t.Error("a connection needing reconnect is no longer listed as usable")
		}
		if n := r.notifications()[notifiedBefore:]; len(n) != 1 || n[0] != string(p.TenantID)+"/"+c.ID {
			t.Errorf("notifications after the marks = %v, want exactly one for %s", n, c.ID)
		}
		var marked int
		for _, e := range r.events(t, p.TenantID) {
			if e.Kind == audit.KindConnectionNeedsReconnect && e.ConnectionID == c.ID && e.Principal == p.ID() {
				marked++
			}
		}
		if marked != 1 {
			t.Errorf("needs_reconnect audit events = %d, want 1", marked)
		}
	})
}
