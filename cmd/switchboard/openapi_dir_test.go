package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenAPIDir: each description in SWITCHBOARD_OPENAPI_DIR becomes a provider of the
// registry, beside the built-in ones; one that cannot is a configuration error naming
// the variable and the file.
func TestOpenAPIDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	desc := `{"openapi":"3.0.0","info":{"title":"Inventory","version":"1"},"servers":[{"url":"https://inventory.example.test"}],
"paths":{"/items":{"get":{"operationId":"listItems","summary":"List items","responses":{"200":{"description":"ok"}}}}}}`
	if err := os.WriteFile(filepath.Join(dir, "inventory.json"), []byte(desc), 0o600); err != nil {
		t.Fatal(err)
	}
	reg, err := newRegistry(config{OpenAPIDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Tool("inventory_list_items"); !ok {
		t.Error("the description's operation is not a tool")
	}
	if _, ok := reg.Provider("github"); !ok {
		t.Error("the built-in providers are gone")
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.json"), []byte(`{"openapi":"3.0.0","paths":{}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = newRegistry(config{OpenAPIDir: dir})
	if err == nil || !strings.Contains(err.Error(), "SWITCHBOARD_OPENAPI_DIR") || !strings.Contains(err.Error(), "broken.json") {
		t.Errorf("error = %v, want SWITCHBOARD_OPENAPI_DIR naming broken.json", err)
	}
}
