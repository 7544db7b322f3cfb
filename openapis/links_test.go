package openapis

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers"
)

// TestAddDropsScriptURLs: an API whose description links its documentation with a
// javascript: URL is added without the link (its view has no docs_url), and an OAuth
// app is refused for one whose authorizationUrl is a javascript: URL: the hub would
// send a person's browser there.
func TestAddDropsScriptURLs(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	const script = "javascript:alert(document.domain)"
	doc := strings.ReplaceAll(`{"openapi":"3.0.3","info":{"title":"Docs","version":"1"},"servers":[{"url":"https://93.184.215.14"}],
"externalDocs":{"url":"URL"},"security":[{"oauth":[]}],
"components":{"securitySchemes":{"oauth":{"type":"oauth2","flows":{"authorizationCode":{"authorizationUrl":"URL","tokenUrl":"https://93.184.215.14/token","scopes":{}}}}}},
"paths":{"/x":{"get":{"operationId":"x","externalDocs":{"url":"URL"},"responses":{"200":{"description":"ok"}}}}}}`, "URL", script)
	r := newRig(t, db, nil)
	_, err := r.svc.Add(t.Context(), r.admin, AddInput{Name: "docs", Description: []byte(doc), ClientID: "app-1"})
	if e := switchboard.AsError(err); e.Code != switchboard.CodeInvalid || e.Field != "client_id" {
		t.Errorf("with an OAuth app: %v, want an invalid client_id error (the scheme has no flow the hub runs)", err)
	}
	v, err := r.svc.Add(t.Context(), r.admin, AddInput{Name: "docs", Description: []byte(doc)})
	if err != nil {
		t.Fatal(err)
	}
	if v.DocsURL != "" || slices.Contains(v.AuthKinds, providers.AuthOAuth2) {
		t.Errorf("view: docs_url %q, auth kinds %v, want no link and no OAuth", v.DocsURL, v.AuthKinds)
	}
	tools, err := r.svc.Tools(t.Context(), r.admin, "docs")
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if u := tl.Op.Info().DocsURL; u != "" {
			t.Errorf("tool %s links %q", tl.Name, u)
		}
	}
}
