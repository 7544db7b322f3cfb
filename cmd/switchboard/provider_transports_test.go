package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"golang.org/x/oauth2"

	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/egress"
	"github.com/switchboard-hub/switchboard/providers"
)

// TestProviderTransportsGuardTheirRedirects: a built-in provider pointed at a private
// address by the deployment (its base URL here, an OAuth app's token URL alike) reaches
// it; a redirect from it to another private address (another loopback port) is
// refused before anything is sent, and so is a request to any private host the
// configuration does not name, unless an operator allows the range. Where allowed, the
// redirect carries no credential.
func TestProviderTransportsGuardTheirRedirects(t *testing.T) {
	t.Parallel()
	const token = "ghp_d3pl0yed"
	var mu sync.Mutex
	var otherGot []http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		otherGot = append(otherGot, r.Header.Clone())
		mu.Unlock()
		_, _ = w.Write([]byte(`{}`))
	}))
	defer other.Close()
	var apiGotToken bool
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		apiGotToken = r.Header.Get("Authorization") == "Bearer "+token
		mu.Unlock()
		http.Redirect(w, r, other.URL+"/elsewhere", http.StatusFound)
	}))
	defer api.Close()
	tokenServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{}`)) }))
	defer tokenServer.Close()

	reg, err := newRegistry(config{BaseURLs: map[string]string{"github": api.URL}})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := reg.Provider("github")
	apps := map[string]connections.OAuthApp{"github": {ClientID: "id", ClientSecret: "secret", TokenURL: tokenServer.URL + "/login/oauth/access_token"}}
	get := func(t *testing.T, guard *egress.Guard, url string) error {
		t.Helper()
		rt := providerTransports(guard, reg, apps)("github")
		c := providers.NewClient(spec, rt, oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token}), nil)
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}

	strict, err := egress.NewGuard(false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var refused *egress.RefusedError
	if err := get(t, strict, api.URL+"/repos/o/r"); !errors.As(err, &refused) || !strings.HasPrefix(other.URL, "http://"+refused.Addr.String()) {
		t.Fatalf("a redirect to another loopback port: err = %v, want the guard's refusal", err)
	}
	if !apiGotToken {
		t.Error("the configured API did not get the connection's token")
	}
	if err := get(t, strict, other.URL+"/direct"); !errors.As(err, &refused) {
		t.Fatalf("a private host the configuration does not name: err = %v, want the guard's refusal", err)
	}
	if err := get(t, strict, tokenServer.URL+"/login/oauth/access_token"); err != nil {
		t.Fatalf("the OAuth app's configured token URL: %v, want it reached", err)
	}
	mu.Lock()
	if len(otherGot) != 0 {
		t.Fatalf("the refused host got %d requests", len(otherGot))
	}
	mu.Unlock()

	allowed, err := egress.NewGuard(false, []string{"127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	if err := get(t, allowed, api.URL+"/repos/o/r"); err != nil {
		t.Fatalf("with loopback allowed: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(otherGot) != 1 {
		t.Fatalf("with loopback allowed the other host got %d requests, want the redirect followed", len(otherGot))
	}
	for k, vs := range otherGot[0] {
		for _, v := range vs {
			if strings.Contains(v, token) {
				t.Errorf("the other origin got the token in %s", k)
			}
		}
	}
}
