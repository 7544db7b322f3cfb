package securitytest

import (
	"bytes"
	"net/http"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/internal/testwait"
)

// TestSSOSecretNeverAnswered: the single sign-on client secret goes in once and never
// comes out, not even to the tenant's owner: not in the settings, not in the answer
// to a change (the second one updates the row in place, keeping the secret), not in
// the audit log that records the change.
func TestSSOSecretNeverAnswered(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		ssoSecretNeverAnswered(t, newHub(t, db))
	})
}

func ssoSecretNeverAnswered(t *testing.T, h *hub) {
	f := h.seed()
	body := `{"issuer":"` + h.idp.Issuer() + `","client_id":"victim-sso-client","client_secret":"` + victimSSOSecret + `","allowed_domains":["victim.test","victim.example"]}`
	answers := map[string][]byte{}
	status, _, b := h.do(f.owner, http.MethodPut, "/api/sso", body, nil)
	if status != http.StatusOK {
		t.Fatalf("PUT /api/sso: %d %s", status, b)
	}
	answers["PUT with a secret"] = b
	status, _, b = h.do(f.owner, http.MethodPut, "/api/sso", `{"issuer":"`+h.idp.Issuer()+`","client_id":"victim-sso-client","allowed_domains":["victim.test"]}`, nil)
	if status != http.StatusOK || !bytes.Contains(b, []byte(`"client_secret_set":true`)) {
		t.Fatalf("PUT /api/sso keeping the secret: %d %s", status, b)
	}
	answers["PUT keeping it"] = b
	_, _, answers["GET"] = h.do(f.owner, http.MethodGet, "/api/sso", "", nil)
	testwait.Until(t, "the sso_set events in the audit log", func() bool {
		_, _, b := h.do(f.owner, http.MethodGet, "/api/audit?kind=sso_set", "", nil)
		answers["audit"] = b
		return bytes.Count(b, []byte(`"sso_set"`)) >= 3
	})
	for name, b := range answers {
		if bytes.Contains(b, []byte(victimSSOSecret)) {
			t.Errorf("%s answers the client secret: %s", name, b)
		}
	}
}
