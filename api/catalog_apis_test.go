package api_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers/catalog"
)

// TestCatalogAPIsListed: an API of the built-in catalog is listed to a member beside
// the curated providers, marked as a catalog API with its logo, ready to connect with
// its token help and default tools; a curated provider carries no such mark.
func TestCatalogAPIsListed(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		w := newWorld(t, db)
		presets, err := catalog.Presets()
		if err != nil {
			t.Fatal(err)
		}
		var gmail catalog.Preset
		for _, p := range presets {
			if p.Name == "gmail" {
				gmail = p
			}
		}
		spec, err := catalog.Spec(t.Context(), gmail)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.reg.Register(spec); err != nil {
			t.Fatal(err)
		}
		var list struct {
			Providers []struct {
				Name       string   `json:"name"`
				Catalog    bool     `json:"catalog"`
				Logo       string   `json:"logo"`
				AuthKinds  []string `json:"auth_kinds"`
				Scopes     []string `json:"scopes"`
				TokenHelp  string   `json:"token_help"`
				Operations int      `json:"operations"`
			} `json:"providers"`
		}
		w.want(w.member, http.MethodGet, "/api/providers", "", http.StatusOK, &list)
		found := false
		for _, p := range list.Providers {
			switch p.Name {
			case "gmail":
				found = true
				svg, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(p.Logo, "data:image/svg+xml;base64,"))
				if !p.Catalog || err != nil || !strings.HasPrefix(string(svg), "<svg") {
					t.Errorf("gmail: catalog %v, logo %.60q; want a catalog API with an SVG logo", p.Catalog, p.Logo)
				}
				if p.Operations != len(gmail.Tools) || len(p.Scopes) == 0 || !strings.Contains(p.TokenHelp, "console.cloud.google.com") || len(p.AuthKinds) == 0 || p.AuthKinds[0] != "oauth2" {
					t.Errorf("gmail: %d tools (want %d), scopes %v, auth %v, token help %q", p.Operations, len(gmail.Tools), p.Scopes, p.AuthKinds, p.TokenHelp)
				}
			case "github":
				if p.Catalog || p.Logo != "" {
					t.Errorf("github, a curated provider, is marked as a catalog API")
				}
			}
		}
		if !found {
			t.Error("the catalog API gmail is not listed")
		}
	})
}
