package github

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/switchboard-hub/switchboard/providers"
)

// oauth is GitHub's OAuth 2.0 web flow, for OAuth apps and for GitHub Apps' user tokens
// (those expire after eight hours and come with a refresh token; the same token
// endpoint refreshes them). GitHub accepts PKCE S256 on both.
// GitHub docs: https://docs.github.com/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
func oauth() *providers.OAuth2 {
	return &providers.OAuth2{
		AuthURL:  "https://github.com/login/oauth/authorize",
		TokenURL: "https://github.com/login/oauth/access_token",
		// Every scope an operation names, so an OAuth connection can run every tool.
		Scopes: []string{"repo", "read:user", "read:org", "gist", "notifications", "workflow"},
		PKCE:   true,
		Revoke: revoke,
	}
}

// revoke deletes the OAuth app's grant for the token, which revokes every token of the
// grant: DELETE /applications/{client_id}/grant with the app's basic auth. A grant
// GitHub no longer knows (404) is already revoked.
// GitHub API docs: https://docs.github.com/rest/apps/oauth-applications#delete-an-app-authorization
func revoke(ctx context.Context, r providers.RevokeRequest) error {
	body, err := json.Marshal(map[string]string{"access_token": r.AccessToken})
	if err != nil {
		return fmt.Errorf("encode github grant deletion: %w", err)
	}
	u := r.BaseURL + "/applications/" + url.PathEscape(r.ClientID) + "/grant"
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, u, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("build github grant deletion: %w", err)
	}
	req.SetBasicAuth(r.ClientID, r.ClientSecret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	resp, err := r.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("GitHub could not be reached to revoke the grant: %w", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	switch {
	case resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusOK:
		return nil
	case resp.StatusCode == http.StatusNotFound:
		return nil // the grant is gone already
	}
	var e apiError
	_ = json.Unmarshal(data, &e)
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return fmt.Errorf("GitHub refused to revoke the grant (%d): %s", resp.StatusCode, e.Message)
}
