package slack

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

const testToken = "xoxb-1111-2222-switchboardtest"

// answer is one canned Slack answer.
type answer struct {
	status int               // 0 means 200
	header map[string]string // extra response headers
	body   string
}

// fake is a Slack Web API stand-in that answers requests with canned answers in turn
// (the last one again once they run out), and the Call that reaches it.
type fake struct {
	up   *providertest.Upstream
	call *providers.Call
}

func newFake(t *testing.T, answers ...answer) *fake {
	t.Helper()
	if len(answers) == 0 {
		t.Fatal("newFake: no answers")
	}
	var (
		mu sync.Mutex
		n  int
	)
	up := providertest.NewUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		a := answers[min(n, len(answers)-1)]
		n++
		mu.Unlock()
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
		}
		status := a.status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		// {{upstream}} stands for the fake's own URL (an upload_url on the fake itself).
		_, _ = w.Write([]byte(strings.ReplaceAll(a.body, "{{upstream}}", "http://"+r.Host)))
	})
	spec := Spec()
	return &fake{up: up, call: providertest.NewCall(t, &spec, up.URL, testToken)}
}

// checkRequests checks every request the fake received for the bearer token and
// against Slack's API description, or, for the methods the description lacks
// (undescribedMethods), against their documented parameters; it returns the operations
// they matched: the description's operationId, or the undescribed method's name.
func (f *fake) checkRequests(t *testing.T) []string {
	t.Helper()
	desc := providertest.SlackDescription(t)
	var ids []string
	for _, r := range f.up.Requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer "+testToken {
			t.Errorf("%s %s: Authorization = %q, want the bearer token", r.Method, r.Path, got)
		}
		if strings.Contains(r.Query.Encode()+string(r.Body), testToken) {
			t.Errorf("%s %s: the token leaked into the query or body", r.Method, r.Path)
		}
		if m, ok := undescribedFor(r.Path); ok {
			m.check(t, r)
			ids = append(ids, m.name)
			continue
		}
		ids = append(ids, desc.CheckRequest(t, r))
	}
	return ids
}

// tool returns a registered tool of the Slack spec.
func tool(t *testing.T, name string) *providers.Tool {
	t.Helper()
	r := providers.NewRegistry()
	if err := r.Register(Spec()); err != nil {
		t.Fatalf("register: %v", err)
	}
	tl, ok := r.Tool(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return tl
}

// invoke runs a tool the way the router does: arguments validated against the input
// schema, then decoded and run with the retry policy of the operation's hints.
func invoke(t *testing.T, call *providers.Call, name, args string) (any, error) {
	t.Helper()
	tl := tool(t, name)
	if err := tl.Validate(json.RawMessage(args)); err != nil {
		t.Fatalf("%s: arguments %s do not validate: %v", name, args, err)
	}
	out, err := tl.Op.Invoke(context.Background(), call, json.RawMessage(args))
	if err == nil {
		providertest.CheckListedOutput(t, tl, out)
	}
	return out, err
}

// wantRequest compares what the fake received last with what Slack expects.
type wantRequest struct {
	method string
	path   string
	query  map[string]string // the whole query
	form   map[string]string // the whole form body, for a form POST
	// contentType and body, when contentType is set, are the raw body of a POST that
	// is not a form (the file bytes sent to an upload URL).
	contentType string
	body        string
}

func (w wantRequest) check(t *testing.T, got providertest.Request) {
	t.Helper()
	if got.Method != w.method || got.Path != w.path {
		t.Errorf("request = %s %s, want %s %s", got.Method, got.Path, w.method, w.path)
	}
	if diff := cmp.Diff(w.query, flat(got.Query), cmpEmptyMap); diff != "" {
		t.Errorf("query (-want +got):\n%s", diff)
	}
	if w.contentType != "" {
		if got.ContentType != w.contentType || string(got.Body) != w.body {
			t.Errorf("body = %s %q, want %s %q", got.ContentType, got.Body, w.contentType, w.body)
		}
		return
	}
	if w.method == http.MethodPost {
		if got.ContentType != "application/x-www-form-urlencoded" {
			t.Errorf("content type = %q, want a form", got.ContentType)
		}
		form, err := parseForm(got.Body)
		if err != nil {
			t.Fatalf("form body %q: %v", got.Body, err)
		}
		if diff := cmp.Diff(w.form, form, cmpEmptyMap); diff != "" {
			t.Errorf("form (-want +got):\n%s", diff)
		}
	} else if len(got.Body) > 0 {
		t.Errorf("GET request has a body: %q", got.Body)
	}
}

var cmpEmptyMap = cmp.FilterValues(func(a, b map[string]string) bool { return len(a) == 0 && len(b) == 0 }, cmp.Ignore())

func TestSpecRegisters(t *testing.T) {
	t.Parallel()
	r := providers.NewRegistry()
	if err := r.Register(Spec()); err != nil {
		t.Fatalf("register: %v", err)
	}
	var names []string
	for _, tl := range r.Tools("slack") {
		names = append(names, tl.Name)
		info := tl.Info
		if !strings.HasPrefix(info.DocsURL, "https://api.slack.com/methods/") {
			t.Errorf("%s: DocsURL %q is not a Slack method page", tl.Name, info.DocsURL)
		}
		// chat.getPermalink is the one method Slack documents with no required scope.
		if noScope := info.Name == "get_permalink"; (len(info.Scopes) == 0) != noScope {
			t.Errorf("%s: scopes %v, want some exactly for methods that need one", tl.Name, info.Scopes)
		}
		if info.Hints.ClosedWorld {
			t.Errorf("%s: a Slack tool reaches an open world", tl.Name)
		}
		verb, _, _ := strings.Cut(info.Name, "_")
		wantReadOnly := verb == "get" || verb == "list" || verb == "search"
		if info.Hints.ReadOnly != wantReadOnly {
			t.Errorf("%s: ReadOnly = %v, want true exactly for get_, list_ and search_ tools", tl.Name, info.Hints.ReadOnly)
		}
	}
	want := []string{
		"slack_list_channels", "slack_get_channel_history", "slack_get_thread_replies", "slack_post_message",
		"slack_reply_to_thread", "slack_add_reaction", "slack_get_users", "slack_get_user_profile",
		"slack_update_message", "slack_delete_message", "slack_schedule_message", "slack_post_ephemeral",
		"slack_get_permalink", "slack_create_channel", "slack_archive_channel", "slack_rename_channel",
		"slack_invite_to_channel", "slack_set_channel_topic", "slack_set_channel_purpose", "slack_get_user_by_email",
		"slack_remove_reaction", "slack_pin_message", "slack_unpin_message", "slack_list_pins",
		"slack_search_messages", "slack_upload_file",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	// Whatever adds something anew must never be retried (a retry would post, schedule,
	// create, invite or upload twice); reactions, pins and archiving may be, as their
	// "already so" answers count as success.
	for name, retryable := range map[string]bool{
		"slack_post_message": false, "slack_reply_to_thread": false, "slack_schedule_message": false,
		"slack_post_ephemeral": false, "slack_create_channel": false, "slack_invite_to_channel": false,
		"slack_upload_file": false, "slack_add_reaction": true, "slack_remove_reaction": true,
		"slack_pin_message": true, "slack_unpin_message": true, "slack_archive_channel": true,
		"slack_get_users": true, "slack_search_messages": true,
	} {
		tl, _ := r.Tool(name)
		if got := tl.Info.Hints.Retryable(); got != retryable {
			t.Errorf("%s: Retryable = %v, want %v", name, got, retryable)
		}
	}
	s := Spec()
	if s.BaseURL != "https://slack.com/api" || s.Name != "slack" || s.RateLimit.PerSecond <= 0 || s.RateLimit.MaxWait <= 0 {
		t.Errorf("spec = %+v", s)
	}
}

const authTestOK = `{"ok":true,"url":"https://acme.slack.com/","team":"Acme Inc","user":"switchboard","team_id":"T0123ABCD","user_id":"U0456EFGH","bot_id":"B0789IJKLM","is_enterprise_install":false}`

func TestVerify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		answer   answer
		want     providers.Account
		wantCode string
	}{
		{
			name:   "bot token with scopes",
			answer: answer{header: map[string]string{"X-OAuth-Scopes": "chat:write, channels:read,channels:history", "X-Accepted-OAuth-Scopes": ""}, body: authTestOK},
			want:   providers.Account{ID: "T0123ABCD/U0456EFGH", Label: "Acme Inc", Scopes: []string{"chat:write", "channels:read", "channels:history"}},
		},
		{
			name:   "no scope header",
			answer: answer{body: authTestOK},
			want:   providers.Account{ID: "T0123ABCD/U0456EFGH", Label: "Acme Inc"},
		},
		{name: "revoked token", answer: answer{body: `{"ok":false,"error":"token_revoked"}`}, wantCode: "reconnect"},
		{name: "invalid token", answer: answer{body: `{"ok":false,"error":"invalid_auth"}`}, wantCode: "reconnect"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, tt.answer)
			spec := Spec()
			got, err := spec.Verify(context.Background(), f.call)
			ids := f.checkRequests(t)
			if diff := cmp.Diff([]string{"auth_test"}, ids); diff != "" {
				t.Errorf("operations (-want +got):\n%s", diff)
			}
			providertest.SlackDescription(t).CheckResponse(t, "auth_test", http.StatusOK, []byte(tt.answer.body))
			wantRequest{method: http.MethodGet, path: "/auth.test"}.check(t, f.up.Last(t))
			if tt.wantCode != "" {
				if code := string(codeOf(err)); code != tt.wantCode {
					t.Fatalf("Verify error = %v (code %s), want code %s", err, code, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("account (-want +got):\n%s", diff)
			}
		})
	}
}

// checkOutput fails t unless out matches the tool's output schema.
func checkOutput(t *testing.T, tl *providers.Tool, out any) {
	t.Helper()
	providertest.CheckListedOutput(t, tl, out)
}

// TestGoldenSchemas compares every tool's schemas with testdata/; after a deliberate
// change, run `go test ./providers/slack -run TestGoldenSchemas -update` and review the diff.
func TestGoldenSchemas(t *testing.T) {
	r := providers.NewRegistry()
	if err := r.Register(Spec()); err != nil {
		t.Fatalf("register: %v", err)
	}
	providertest.GoldenSchemas(t, r.Tools("slack"))
}

// TestCatalog holds every Slack operation to the catalog-quality bar.
func TestCatalog(t *testing.T) {
	t.Parallel()
	providertest.CheckCatalog(t, Spec())
}
