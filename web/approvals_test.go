package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/web"
)

// fakeApprovals has one run waiting for a confirmation alice may give, run_wait, and
// records the answers it was given.
type fakeApprovals struct {
	mu      sync.Mutex
	run     web.Approval
	answers []string
}

func (f *fakeApprovals) Approval(_ context.Context, p switchboard.Principal, id string) (web.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id != f.run.RunID || p.UserID != "usr_alice" {
		return web.Approval{}, switchboard.NotFound("run")
	}
	return f.run, nil
}

func (f *fakeApprovals) Approve(ctx context.Context, p switchboard.Principal, id, action string) (web.Approval, error) {
	if _, err := f.Approval(ctx, p, id); err != nil {
		return web.Approval{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, p.UserID+" "+id+" "+action)
	f.run.State, f.run.Action = "working", action
	return f.run, nil
}

func (f *fakeApprovals) Pending(_ context.Context, p switchboard.Principal) ([]web.Approval, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.UserID != "usr_alice" || f.run.State != "input_required" {
		return nil, nil
	}
	return []web.Approval{f.run}, nil
}

func (f *fakeApprovals) given() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.answers...)
}

// TestApprovalPage: a pending confirmation has a page that only a signed-in person
// reaches, listed in Activity; its form answers only with the session's anti-forgery
// token, and the answer is the person's, given once.
func TestApprovalPage(t *testing.T) {
	t.Parallel()
	acc := newFakeAccounts()
	expires := time.Date(2026, 5, 4, 10, 30, 0, 0, time.UTC)
	ap := &fakeApprovals{run: web.Approval{RunID: "run_wait", Tool: "slack_delete_message", Account: "Acme Slack", Requester: "agent:agt_bot",
		Message: "Confirm: Delete message (slack_delete_message) will run as Slack account \"Acme Slack\".", Arguments: `{"channel":"C042","ts":"1712.0001"}`,
		State: "input_required", ExpiresAt: &expires}}
	h, err := web.Handler(web.Options{PublicURL: "https://hub.test", DefaultTenant: "acme", Accounts: acc, Approvals: ap})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := client(nil)

	res, _ := do(t, c, http.MethodGet, srv.URL+"/approvals/run_wait", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/signin?next=%2Fapprovals%2Frun_wait" {
		t.Errorf("without a session: %d to %q, want 303 to sign-in", res.StatusCode, res.Header.Get("Location"))
	}
	// A deep link keeps its query through sign-in.
	res, _ = do(t, c, http.MethodGet, srv.URL+"/approvals/run_wait?from=mail", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/signin?next=%2Fapprovals%2Frun_wait%3Ffrom%3Dmail" {
		t.Errorf("a deep link without a session: %d to %q, want 303 to sign-in, coming back with its query", res.StatusCode, res.Header.Get("Location"))
	}
	res, _ = do(t, c, http.MethodPost, srv.URL+"/approvals/run_wait", url.Values{"action": {"accept"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Errorf("answer without a session: %d, want 303 to sign-in", res.StatusCode)
	}

	token := acc.session(t)
	csrf := acc.CSRFToken(token)
	res, body := do(t, c, http.MethodGet, srv.URL+"/activity", nil, sessionCookie(token))
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `<a href="/approvals/run_wait"><code>slack_delete_message</code> as Acme Slack</a>`) {
		t.Errorf("Activity does not list the pending confirmation: %d\n%s", res.StatusCode, body)
	}
	res, body = do(t, c, http.MethodGet, srv.URL+"/approvals/run_wait", nil, sessionCookie(token))
	for _, want := range []string{"will run as Slack account &#34;Acme Slack&#34;", "agent:agt_bot", `name="csrf" value="` + csrf + `"`, `value="accept"`, `value="decline"`, "2026-05-04 10:30 UTC", `{&#34;channel&#34;:&#34;C042&#34;,&#34;ts&#34;:&#34;1712.0001&#34;}`} {
		if res.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("approval page: %d, does not show %q", res.StatusCode, want)
		}
	}
	if res, _ := do(t, c, http.MethodGet, srv.URL+"/approvals/run_other", nil, sessionCookie(token)); res.StatusCode != http.StatusNotFound {
		t.Errorf("another run's page: %d, want 404", res.StatusCode)
	}

	tests := []struct {
		name   string
		form   url.Values
		status int
	}{
		{name: "no anti-forgery token", form: url.Values{"action": {"accept"}}, status: http.StatusForbidden},
		{name: "another session's token", form: url.Values{"action": {"accept"}, "csrf": {acc.CSRFToken("sbs_other")}}, status: http.StatusForbidden},
		{name: "no action", form: url.Values{"csrf": {csrf}}, status: http.StatusBadRequest},
		{name: "unknown action", form: url.Values{"csrf": {csrf}, "action": {"cancel"}}, status: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if res, _ := do(t, c, http.MethodPost, srv.URL+"/approvals/run_wait", tt.form, sessionCookie(token)); res.StatusCode != tt.status {
				t.Errorf("status %d, want %d", res.StatusCode, tt.status)
			}
		})
	}
	if got := ap.given(); len(got) != 0 {
		t.Fatalf("refused forms answered %v", got)
	}
	res, _ = do(t, c, http.MethodPost, srv.URL+"/approvals/run_wait", url.Values{"csrf": {csrf}, "action": {"accept"}}, sessionCookie(token))
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/approvals/run_wait" {
		t.Errorf("answer: %d to %q, want 303 back to the page", res.StatusCode, res.Header.Get("Location"))
	}
	if diff := cmp.Diff([]string{"usr_alice run_wait accept"}, ap.given()); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	res, body = do(t, c, http.MethodGet, srv.URL+"/approvals/run_wait", nil, sessionCookie(token))
	if res.StatusCode != http.StatusOK || strings.Contains(body, `value="accept"`) || !strings.Contains(body, "Approved: it runs now") {
		t.Errorf("after the answer the page still offers the form or does not say it: %d\n%s", res.StatusCode, body)
	}
}

// TestApprovalPageSaysWhyARunFailed: an approved run that failed says why on its page,
// and one still running says where its result will be.
func TestApprovalPageSaysWhyARunFailed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		state, err, want string
	}{
		{"failed", "notes answered 404: no such note", "Approved: the run failed: notes answered 404: no such note"},
		{"working", "", "Approved: it runs now; its result will be among the runs in Activity."},
		{"completed", "", "Approved: the run completed."},
	} {
		ap := &fakeApprovals{run: web.Approval{RunID: "run_wait", Tool: "notes_delete_note", Account: "Notes", Requester: "owner@acme.test",
			Message: "Confirm: Delete note.", State: tc.state, Action: "accept", Error: tc.err}}
		acc := newFakeAccounts()
		h, err := web.Handler(web.Options{PublicURL: "https://hub.test", DefaultTenant: "acme", Accounts: acc, Approvals: ap})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		token := acc.session(t)
		res, body := do(t, client(nil), http.MethodGet, srv.URL+"/approvals/run_wait", nil, sessionCookie(token))
		srv.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(body, tc.want) || !strings.Contains(body, "owner@acme.test") {
			t.Errorf("%s run: %d, want the page to say %q and who asked:\n%s", tc.state, res.StatusCode, tc.want, body)
		}
	}
}
