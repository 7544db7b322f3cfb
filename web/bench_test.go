package web_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/switchboard-hub/switchboard/web"
)

// BenchmarkAppPage measures serving a signed-in page shell: the session check (an
// in-memory fake here) and the template.
func BenchmarkAppPage(b *testing.B) {
	acc := newFakeAccounts()
	h, err := web.Handler(web.Options{PublicURL: "https://hub.example.com", DefaultTenant: "acme", Accounts: acc})
	if err != nil {
		b.Fatal(err)
	}
	token, err := acc.SignIn(b.Context(), "acme", "alice@acme.test", goodPassword)
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/settings", nil)
	req.AddCookie(sessionCookie(token))
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}
