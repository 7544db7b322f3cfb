package securitytest

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers/openapi"
)

// TestOpenAPIDescriptionsBounded: over REST, an owner's description that nests past the
// bound is refused naming the field and the bound, before it is parsed; a description's
// javascript: documentation links reach neither the API's view nor its operations; a
// description fetched from a host that resolves to a private address is refused
// without the address; and nothing of the refused ones is stored.
func TestOpenAPIDescriptionsBounded(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		openAPIDescriptionsBounded(t, newHub(t, db))
	})
}

func openAPIDescriptionsBounded(t *testing.T, h *hub) {
	f := h.seed()
	deep := `{"openapi":"3.0.3","x":` + strings.Repeat(`{"a":`, 4*openapi.MaxDepth) + `[`
	refusals := []struct{ name, body, field, says, never string }{
		{"nested past the bound", `{"name":"deep_api","description":` + strconv.Quote(deep) + `}`, "description", fmt.Sprintf("more than %d levels deep", openapi.MaxDepth), "JSON"},
		{"fetched from a private address", `{"name":"scan_api","url":"http://localhost:6379/"}`, "url", "private, loopback", "127.0.0.1"},
	}
	for _, tt := range refusals {
		status, _, b := h.do(f.owner, http.MethodPost, "/api/openapi-providers", tt.body, nil)
		if status != http.StatusBadRequest || !bytes.Contains(b, []byte(`"field":"`+tt.field+`"`)) || !bytes.Contains(b, []byte(tt.says)) || bytes.Contains(b, []byte(tt.never)) {
			t.Errorf("%s: %d %s, want 400 on %s saying %q, never %q", tt.name, status, b, tt.field, tt.says, tt.never)
		}
	}
	const script = "javascript:fetch('/api/keys')"
	doc := strings.ReplaceAll(`{"openapi":"3.0.3","info":{"title":"Docs","version":"1"},"servers":[{"url":"https://93.184.215.14"}],
"externalDocs":{"url":"URL"},"paths":{"/x":{"get":{"operationId":"x","externalDocs":{"url":"URL"},"responses":{"200":{"description":"ok"}}}}}}`, "URL", script)
	status, _, b := h.do(f.owner, http.MethodPost, "/api/openapi-providers", `{"name":"docs_api","description":`+strconv.Quote(doc)+`}`, nil)
	if status != http.StatusCreated {
		t.Fatalf("add an API linking javascript: docs: %d %s", status, b)
	}
	for _, path := range []string{"/api/openapi-providers", "/api/providers", "/api/providers/docs_api/operations"} {
		if _, _, b := h.do(f.owner, http.MethodGet, path, "", nil); bytes.Contains(b, []byte("javascript:")) {
			t.Errorf("GET %s answers the javascript: link: %s", path, b)
		}
	}
	if _, _, b := h.do(f.owner, http.MethodGet, "/api/openapi-providers", "", nil); bytes.Contains(b, []byte("deep_api")) || bytes.Contains(b, []byte("scan_api")) {
		t.Errorf("a refused API was stored: %s", b)
	}
}
