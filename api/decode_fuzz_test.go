package api

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/switchboard-hub/switchboard"
)

// FuzzDecode: the REST decoder reads any body into each request type without a panic,
// and refuses with an invalid error that names the field (or the body).
func FuzzDecode(f *testing.F) {
	gin.SetMode(gin.TestMode)
	for _, s := range []string{
		`{"name":"a","tools":[{"tool":"github_get_me","connection_id":"con_1"}],"version":2}`,
		`{"tool":"t","connection_id":"c","arguments":{"x":1}}`,
		`{"email":"a@b.test","role":"admin"}`,
		`{"role":7}`, `{"tools":{}}`, `{"version":"1"}`, `{} {}`, `[1]`, `{"name":"a"`, `null`, ``, `{"unknown":true}`,
	} {
		f.Add([]byte(s))
	}
	targets := []func() any{
		func() any { return &agentRequest{} },
		func() any { return &startRunRequest{} },
		func() any { return &callToolRequest{} },
		func() any { return &createInvitationRequest{} },
		func() any { return &setUserRoleRequest{} },
		func() any { return &createTenantRequest{} },
		func() any { return &mcpSettingsRequest{} },
		func() any { return &authorizeRequest{} },
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, target := range targets {
			c, _ := gin.CreateTestContext(httptest.NewRecorder())
			c.Request = httptest.NewRequest(http.MethodPost, "/api/x", bytes.NewReader(body))
			v := target()
			err := decode(c, v)
			if err == nil {
				continue
			}
			e := switchboard.AsError(err)
			if e.Code != switchboard.CodeInvalid || e.Field == "" || e.Message == "" {
				t.Fatalf("decode(%q) into %T = %v, want an invalid error naming a field", body, v, err)
			}
		}
	})
}
