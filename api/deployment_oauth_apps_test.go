package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
)

// TestDeploymentOAuthApps: the operator's key lists every provider that connects with
// OAuth with the deployment's app of each (the environment's GitHub app shown, its
// secret never), sets Slack's app (refused for GitHub, which the environment sets),
// and a member of a tenant without its own app then connects Slack with it in one
// click; nobody else may list, set or remove the deployment's apps.
func TestDeploymentOAuthApps(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		h := newOAuthHub(t, db, githubApp())
		for _, who := range []actor{h.member, h.ownerB} {
			h.api(who, http.MethodGet, "/api/deployment/oauth-apps", "", http.StatusForbidden, nil)
			h.api(who, http.MethodPut, "/api/deployment/oauth-apps/slack", `{"client_id":"x","client_secret":"y"}`, http.StatusForbidden, nil)
		}
		h.api(h.admin, http.MethodPut, "/api/deployment/oauth-apps/github", `{"client_id":"ui-app","client_secret":"ui-secret"}`, http.StatusConflict, nil)
		h.api(h.admin, http.MethodPut, "/api/deployment/oauth-apps/slack", `{"client_id":"","client_secret":"y"}`, http.StatusBadRequest, nil)

		var set struct {
			Provider string `json:"provider"`
			Source   string `json:"source"`
			ClientID string `json:"client_id"`
			Variable string `json:"variable"`
		}
		b := h.api(h.admin, http.MethodPut, "/api/deployment/oauth-apps/slack", `{"client_id":"123.456","client_secret":"deploy-slack-secret"}`, http.StatusOK, &set)
		if set.Provider != "slack" || set.Source != "operator" || set.ClientID != "123.456" || set.Variable != "SWITCHBOARD_OAUTH_SLACK_CLIENT_ID" {
			t.Errorf("the set app: %s", b)
		}
		var list struct {
			Apps []struct {
				Provider string `json:"provider"`
				Source   string `json:"source"`
				ClientID string `json:"client_id"`
			} `json:"oauth_apps"`
		}
		b = h.api(h.admin, http.MethodGet, "/api/deployment/oauth-apps", "", http.StatusOK, &list)
		if strings.Contains(string(b), "secret") {
			t.Errorf("the list carries a secret: %s", b)
		}
		got := map[string]string{}
		for _, a := range list.Apps {
			got[a.Provider] = a.Source + " " + a.ClientID
		}
		if got["github"] != "environment "+testClientID || got["slack"] != "operator 123.456" || got["notion"] != " " {
			t.Errorf("the list: %v", got)
		}
		if _, ok := got["airtable"]; ok {
			t.Errorf("the list holds Airtable, which connects with no OAuth")
		}

		resp, body := h.send(h.browser(), h.member, http.MethodPost, h.srv.URL+"/api/connections/slack/authorize", `{}`, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("a member connecting Slack: %d %s", resp.StatusCode, body)
		}
		var start struct {
			AuthorizationURL string `json:"authorization_url"`
		}
		if err := json.Unmarshal(body, &start); err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(start.AuthorizationURL)
		if err != nil || u.Query().Get("client_id") != "123.456" {
			t.Errorf("the member's authorization URL %s does not carry the operator's app", start.AuthorizationURL)
		}

		h.api(h.member, http.MethodDelete, "/api/deployment/oauth-apps/slack", "", http.StatusForbidden, nil)
		h.api(h.admin, http.MethodDelete, "/api/deployment/oauth-apps/slack", "", http.StatusNoContent, nil)
		resp, body = h.send(h.browser(), h.member, http.MethodPost, h.srv.URL+"/api/connections/slack/authorize", `{}`, nil)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "SWITCHBOARD_OAUTH_SLACK_CLIENT_ID") {
			t.Errorf("connecting Slack with no app: %d %s; want 400 naming SWITCHBOARD_OAUTH_SLACK_CLIENT_ID", resp.StatusCode, body)
		}
	})
}
