package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The Slack tokens the fake Slack knows, each a bot of one workspace.
const (
	slackMemberToken = "xoxb-member-0123456789-abcdefghijklmnop"
	slackOtherToken  = "xoxb-other-0123456789-abcdefghijklmnopq"
)

// slackAccount is the workspace and bot a Slack token belongs to.
type slackAccount struct{ team, teamID, userID string }

// fakeSlack answers like https://slack.com/api for auth.test and chat.postMessage:
// HTTP 200 with ok:false and Slack's error code for an unknown token (invalid_auth) or
// a missing channel or text, X-OAuth-Scopes on authenticated answers. It records the
// token and channel of every message posted.
// https://api.slack.com/methods/auth.test
// https://api.slack.com/methods/chat.postMessage
type fakeSlack struct {
	*httptest.Server
	mu     sync.Mutex
	tokens map[string]slackAccount
	posted []string // "token channel text"
}

func newFakeSlack(t *testing.T) *fakeSlack {
	t.Helper()
	f := &fakeSlack{tokens: map[string]slackAccount{
		slackMemberToken: {team: "Work Slack", teamID: "T0MEMBER1", userID: "U0BOT0001"},
		slackOtherToken:  {team: "Work Slack", teamID: "T0OTHER01", userID: "U0BOT0002"},
	}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		answer := func(v map[string]any) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_ = json.NewEncoder(w).Encode(v)
		}
		token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		acct, ok := f.tokens[token]
		if !ok {
			answer(map[string]any{"ok": false, "error": "invalid_auth"})
			return
		}
		w.Header().Set("X-OAuth-Scopes", "chat:write,channels:read")
		switch strings.TrimPrefix(r.URL.Path, "/api/") {
		case "auth.test":
			answer(map[string]any{"ok": true, "url": "https://work.slack.com/", "team": acct.team, "user": "switchboard",
				"team_id": acct.teamID, "user_id": acct.userID, "bot_id": "B" + acct.userID})
		case "chat.postMessage":
			if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
				answer(map[string]any{"ok": false, "error": "invalid_form_data"})
				return
			}
			channel, text := r.PostForm.Get("channel"), r.PostForm.Get("text")
			if channel == "" {
				answer(map[string]any{"ok": false, "error": "channel_not_found"})
				return
			}
			if text == "" {
				answer(map[string]any{"ok": false, "error": "no_text"})
				return
			}
			f.mu.Lock()
			f.posted = append(f.posted, token+" "+channel+" "+text)
			f.mu.Unlock()
			answer(map[string]any{"ok": true, "channel": channel, "ts": "1712345678.000100",
				"message": map[string]any{"type": "message", "text": text, "ts": "1712345678.000100", "user": acct.userID}})
		default:
			answer(map[string]any{"ok": false, "error": "unknown_method"})
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// messages returns what was posted, as "token channel text".
func (f *fakeSlack) messages() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.posted...)
}

// connectSlack connects the Slack workspace of token as who and returns its id.
func (w *world) connectSlack(who actor, token string, shared bool) string {
	w.t.Helper()
	body, _ := json.Marshal(map[string]any{"provider": "slack", "token": token, "shared": shared})
	var got struct {
		ID string `json:"id"`
	}
	w.want(who, http.MethodPost, "/api/connections", string(body), http.StatusCreated, &got)
	return got.ID
}
