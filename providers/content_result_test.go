package providers_test

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
)

// TestContentResultText: the text of a content result is its text blocks, one per
// line; images and links say nothing.
func TestContentResultText(t *testing.T) {
	t.Parallel()
	r := &providers.ContentResult{Content: []json.RawMessage{
		json.RawMessage(`{"type":"text","text":"first"}`),
		json.RawMessage(`{"type":"image","data":"AA==","mimeType":"image/png"}`),
		json.RawMessage(`{"type":"text","text":"second"}`),
	}}
	if got, want := r.Text(), "first\nsecond"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"content":[{"type":"text","text":"first"},{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"text","text":"second"}]}`; string(raw) != want {
		t.Errorf("JSON = %s, want %s", raw, want)
	}
}
