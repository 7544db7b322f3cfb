package all_test

import (
	"slices"

	"testing"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/all"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// TestCatalogQuality checks every registered provider's catalog: each operation an
// agent can act on at first sight (description, docs, hints, examples, output schema).
func TestCatalogQuality(t *testing.T) {
	t.Parallel()
	reg := providers.NewRegistry()
	if err := all.Register(reg); err != nil {
		t.Fatal(err)
	}
	for _, spec := range reg.Providers() {
		t.Run(spec.Name, func(t *testing.T) {
			t.Parallel()
			providertest.CheckCatalog(t, *spec)
		})
	}
}

// TestOAuthAsksForEveryOperationsScopes: an OAuth connection carries the scopes its
// provider's flow asks for, so a scope an operation needs but the flow does not ask for
// leaves that tool failing on every OAuth connection. Slack is left out: its operations
// list alternative scopes, one per conversation type, and search needs a user token;
// so is Notion, whose operations name integration capabilities, not OAuth scopes.
func TestOAuthAsksForEveryOperationsScopes(t *testing.T) {
	t.Parallel()
	for _, spec := range all.Specs() {
		if spec.OAuth == nil || spec.Name == "slack" || spec.Name == "notion" {
			continue
		}
		t.Run(spec.Name, func(t *testing.T) {
			t.Parallel()
			asked := map[string]bool{}
			for _, s := range append(slices.Clone(spec.OAuth.Scopes), spec.OAuth.UserScopes...) {
				asked[s] = true
			}
			for _, op := range spec.Operations {
				for _, s := range op.Info().Scopes {
					if !asked[s] {
						t.Errorf("%s needs scope %q, which the OAuth flow does not ask for", op.Info().Name, s)
					}
				}
			}
		})
	}
}
