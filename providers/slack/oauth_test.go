package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
)

func TestTokenResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want map[string]any
	}{
		{
			name: "bot token with the team",
			in:   `{"ok":true,"access_token":"xoxb-1","token_type":"bot","scope":"chat:write","bot_user_id":"U0B","team":{"id":"T1","name":"Acme"},"authed_user":{"id":"U1"}}`,
			want: map[string]any{"ok": true, "access_token": "xoxb-1", "token_type": "Bearer", "slack_token_type": "bot", "scope": "chat:write", "bot_user_id": "U0B",
				"team": map[string]any{"id": "T1", "name": "Acme"}, "authed_user": map[string]any{"id": "U1"}},
		},
		{
			name: "user scopes only: the user token takes its place",
			in:   `{"ok":true,"team":{"id":"T1","name":"Acme"},"authed_user":{"id":"U1","scope":"search:read","access_token":"xoxp-1","token_type":"user","refresh_token":"xoxe-1","expires_in":43200}}`,
			want: map[string]any{"ok": true, "access_token": "xoxp-1", "token_type": "Bearer", "slack_token_type": "user", "scope": "search:read", "refresh_token": "xoxe-1", "expires_in": float64(43200),
				"team":        map[string]any{"id": "T1", "name": "Acme"},
				"authed_user": map[string]any{"id": "U1", "scope": "search:read", "access_token": "xoxp-1", "token_type": "user", "refresh_token": "xoxe-1", "expires_in": float64(43200)}},
		},
		{
			name: "ok false becomes an OAuth error",
			in:   `{"ok":false,"error":"invalid_code"}`,
			want: map[string]any{"ok": false, "error": "invalid_code"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := tokenResponse([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("rewritten answer (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := tokenResponse([]byte(`<html>`)); err == nil {
		t.Error("an answer that is not JSON was accepted")
	}
}

func TestRevoke(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  int
		body    string
		wantErr string
	}{
		{name: "revoked", status: 200, body: `{"ok":true,"revoked":true}`},
		{name: "already invalid", status: 200, body: `{"ok":false,"error":"invalid_auth"}`},
		{name: "token revoked before", status: 200, body: `{"ok":false,"error":"token_revoked"}`},
		{name: "refused", status: 200, body: `{"ok":false,"error":"ratelimited"}`, wantErr: "ratelimited"},
		{name: "rate limited", status: 429, body: `{"ok":false,"error":"ratelimited"}`, wantErr: "429"},
		{name: "outage", status: 503, body: `upstream connect error`, wantErr: "503"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = r.Method + " " + r.URL.Path + " " + r.Header.Get("Authorization")
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			err := revoke(context.Background(), providers.RevokeRequest{HTTP: srv.Client(), BaseURL: srv.URL, ClientID: "cid", ClientSecret: "cs", AccessToken: "xoxb-tok"})
			if got != "POST /auth.revoke Bearer xoxb-tok" {
				t.Errorf("request = %q", got)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("err = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want one naming %q", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "xoxb-tok") {
				t.Errorf("the error carries the token: %v", err)
			}
		})
	}
}
