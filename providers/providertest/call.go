package providertest

import (
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/switchboard-hub/switchboard/providers"
)

// Tenant and connection identifiers of the Calls NewCall returns.
const (
	TestTenant       = "ten_test"
	TestConnectionID = "con_test"
)

// NewCall returns a Call whose HTTP client is the real one from providers.NewClient
// (the spec's rate limit and headers, retries, and an Authorization: Bearer header
// from a static token) pointed at baseURL, usually an Upstream's URL. Its idle
// connections close when the test ends.
func NewCall(t testing.TB, spec *providers.Spec, baseURL, token string) *providers.Call {
	t.Helper()
	switch {
	case spec == nil:
		t.Fatalf("providertest.NewCall: spec is nil")
	case baseURL == "":
		t.Fatalf("providertest.NewCall: baseURL is empty")
	case token == "":
		t.Fatalf("providertest.NewCall: token is empty")
	}
	tr := providers.NewTransport()
	t.Cleanup(tr.CloseIdleConnections)
	tokens := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token, TokenType: "Bearer"})
	return &providers.Call{
		Tenant:       TestTenant,
		ConnectionID: TestConnectionID,
		BaseURL:      strings.TrimRight(baseURL, "/"),
		HTTP:         providers.NewClient(spec, tr, tokens, nil),
	}
}
