package api_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/runs"
)

func sign(secret, payload string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(payload))
	return hex.EncodeToString(mac.Sum(nil))
}

// hook posts a delivery to a workflow's webhook URL.
func (w *world) hook(path, body string, header map[string]string) (int, string) {
	w.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, w.srv.URL+path, bytes.NewReader([]byte(body)))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	checkExchange(w.t, http.MethodPost, req.URL.Path, []byte(body), res, b)
	return res.StatusCode, string(b)
}

// waitSlack waits until the fake Slack holds n messages.
func (w *world) waitSlack(n int) []string {
	w.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := w.slack.messages(); len(m) >= n {
			return m
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("the fake Slack got %d messages within 30 s, want %d", len(w.slack.messages()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWebhookTriggers delivers GitHub and Slack events with real signatures to
// workflows' webhook URLs: a bad signature, a replayed delivery (also under a new
// X-GitHub-Delivery) and a stale Slack timestamp are refused, Slack's URL verification is answered, an event the trigger
// does not take is ignored, and a good delivery runs the workflow with the event as
// its parameters, as the person who saved it.
func TestWebhookTriggers(t *testing.T) {
	t.Parallel()
	w := newWorld(t, testdb.SQLite(t))
	w.connectSlack(w.admin, slackMemberToken, false)
	const ghSecret, slSecret = "gh-secret-0123456789abcdef", "slack-signing-0123456789abcdef"
	defs := map[string]string{
		"gh_hook":    "name: gh_hook\ntriggers:\n  - github: {events: [issues]}\nsteps:\n  - name: post\n    tool: slack_post_message\n    args: {channel: C0123ABCD, text: \"${{ params.action }}: ${{ params.issue.title }}\"}\n",
		"slack_hook": "name: slack_hook\ntriggers:\n  - slack: {events: [app_mention]}\nsteps:\n  - name: post\n    tool: slack_post_message\n    args: {channel: C0123ABCD, text: \"mentioned: ${{ params.text }}\"}\n",
	}
	for name, def := range defs {
		body, _ := json.Marshal(map[string]any{"definition": def})
		w.want(w.admin, http.MethodPost, "/api/workflows", string(body), http.StatusCreated, nil)
		provider := strings.TrimSuffix(name, "_hook")
		if provider == "gh" {
			provider = "github"
		}
		secret := map[string]string{"github": ghSecret, "slack": slSecret}[provider]
		var set struct {
			URL string `json:"url"`
		}
		w.want(w.admin, http.MethodPut, "/api/workflows/"+name+"/webhooks/"+provider, `{"secret":"`+secret+`"}`, http.StatusOK, &set)
		if want := "/hooks/workflows/default/" + name + "/" + provider; !strings.HasSuffix(set.URL, want) {
			t.Fatalf("webhook URL %q, want …%s", set.URL, want)
		}
	}
	// A member may not set the secret of the admin's workflow.
	if status, _ := w.do(w.member, http.MethodPut, "/api/workflows/gh_hook/webhooks/github", `{"secret":"`+ghSecret+`"}`); status != http.StatusForbidden {
		t.Fatalf("member sets the secret: %d", status)
	}

	gh := "/hooks/workflows/default/gh_hook/github"
	payload := `{"action":"opened","issue":{"number":7,"title":"It broke"}}`
	headers := func(sig, event, delivery string) map[string]string {
		return map[string]string{"Content-Type": "application/json", "X-Hub-Signature-256": "sha256=" + sig, "X-GitHub-Event": event, "X-GitHub-Delivery": delivery}
	}
	if status, b := w.hook(gh, payload, headers(sign("wrong-secret-0123456789", payload), "issues", "d1")); status != http.StatusUnauthorized {
		t.Fatalf("bad signature: %d %s", status, b)
	}
	if status, b := w.hook(gh, payload, headers(sign(ghSecret, payload), "push", "d0")); status != http.StatusOK || !strings.Contains(b, "ignored") {
		t.Fatalf("an event the trigger does not take: %d %s", status, b)
	}
	if status, b := w.hook(gh, payload, headers(sign(ghSecret, payload), "issues", "d1")); status != http.StatusAccepted {
		t.Fatalf("good delivery: %d %s", status, b)
	}
	if got := w.waitSlack(1); !strings.HasSuffix(got[0], "C0123ABCD opened: It broke") {
		t.Fatalf("slack got %v", got)
	}
	if status, b := w.hook(gh, payload, headers(sign(ghSecret, payload), "issues", "d1")); status != http.StatusConflict {
		t.Fatalf("replayed delivery: %d %s", status, b)
	}
	// The delivery id is not signed: the captured delivery under a new one is the same
	// replay.
	if status, b := w.hook(gh, payload, headers(sign(ghSecret, payload), "issues", "d1-replayed")); status != http.StatusConflict {
		t.Fatalf("replayed delivery under a new delivery id: %d %s", status, b)
	}

	sl := "/hooks/workflows/default/slack_hook/slack"
	slackHeaders := func(at time.Time, body string) map[string]string {
		ts := strconv.FormatInt(at.Unix(), 10)
		return map[string]string{"Content-Type": "application/json", "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": "v0=" + sign(slSecret, "v0:"+ts+":"+body)}
	}
	verify := `{"type":"url_verification","challenge":"ch-123"}`
	if status, b := w.hook(sl, verify, slackHeaders(time.Now(), verify)); status != http.StatusOK || !strings.Contains(b, `"challenge":"ch-123"`) {
		t.Fatalf("url verification: %d %s", status, b)
	}
	if status, b := w.hook(sl, verify, slackHeaders(time.Now().Add(-10*time.Minute), verify)); status != http.StatusUnauthorized {
		t.Fatalf("stale timestamp: %d %s", status, b)
	}
	event := `{"type":"event_callback","event_id":"Ev1","event":{"type":"app_mention","text":"hello hub"}}`
	if status, b := w.hook(sl, event, slackHeaders(time.Now(), event)); status != http.StatusAccepted {
		t.Fatalf("slack event: %d %s", status, b)
	}
	if got := w.waitSlack(2); !strings.HasSuffix(got[1], "C0123ABCD mentioned: hello hub") {
		t.Fatalf("slack got %v", got)
	}
	// The runs are the saver's own.
	admin := switchboard.Principal{TenantID: w.a.ID, Kind: switchboard.PrincipalUser, UserID: w.admin.userID}
	list, _, err := w.runs.List(context.Background(), admin, runs.ListOptions{})
	if err != nil || len(list) != 2 {
		t.Fatalf("the saver's runs: %v, %v", list, err)
	}
	// Another tenant's slug finds nothing.
	if status, _ := w.hook(fmt.Sprintf("/hooks/workflows/%s/gh_hook/github", "tenant-b"), payload, headers(sign(ghSecret, payload), "issues", "d2")); status != http.StatusNotFound {
		t.Fatalf("another tenant's URL: %d", status)
	}
}
