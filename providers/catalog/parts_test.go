package catalog

import (
	"net/http"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
)

// TestCredentialInParts: a preset whose credential has several parts (Trello's key and
// token) takes them pasted as one token, KEY:TOKEN, puts each in its own parameter,
// refuses at connect time a token without every part (an invalid "token" error saying
// the form, never repeating the token), and tells the person where to make each part.
// A preset that names its parts wrongly is refused, naming the field.
func TestCredentialInParts(t *testing.T) {
	t.Parallel()
	spec, err := SpecOf(t.Context(), "trello")
	if err != nil {
		t.Fatal(err)
	}
	if spec.CheckToken == nil {
		t.Fatal("trello checks no pasted token")
	}
	for _, bad := range []string{"0123456789abcdef", "0123456789abcdef:", ":ATTAsecret", "a:b:c", " : "} {
		err := spec.CheckToken(bad)
		e := switchboard.AsError(err)
		if err == nil || e.Code != switchboard.CodeInvalid || e.Field != "token" || !strings.Contains(e.Message, "KEY:TOKEN") {
			t.Errorf("CheckToken(%q) = %v, want an invalid token saying KEY:TOKEN", bad, err)
		}
		if err != nil && (strings.Contains(err.Error(), "0123456789abcdef") || strings.Contains(err.Error(), "ATTAsecret")) {
			t.Errorf("CheckToken(%q) = %v repeats the token", bad, err)
		}
	}
	if err := spec.CheckToken("0123456789abcdef : ATTAsecret"); err != nil {
		t.Errorf("CheckToken(key:token) = %v", err)
	}
	for _, want := range []string{"KEY:TOKEN", "https://trello.com/power-ups/admin", "API key", "token"} {
		if !strings.Contains(spec.TokenHelp, want) {
			t.Errorf("the token help does not say %q: %s", want, spec.TokenHelp)
		}
	}
	r, _ := http.NewRequest(http.MethodGet, "https://api.trello.com/1/boards/x?fields=name&token=agent", nil)
	spec.Authorize(r, "0123456789abcdef : ATTAsecret")
	if q := r.URL.Query(); q.Get("key") != "0123456789abcdef" || len(q["token"]) != 1 || q.Get("token") != "ATTAsecret" || q.Get("fields") != "name" {
		t.Errorf("the request's query is %v, want key and token from the connection beside fields", q)
	}

	presets, err := Presets()
	if err != nil {
		t.Fatal(err)
	}
	var trello Preset
	for _, p := range presets {
		if p.Name == "trello" {
			trello = p
		}
	}
	data, err := Description("trello")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		key   APIKey
		field string
	}{
		{APIKey{In: "query", Name: "key", Parts: []string{"key", "token"}}, "api_key.parts"},
		{APIKey{In: "query", Parts: []string{"key"}}, "api_key.parts"},
		{APIKey{In: "query", Parts: []string{"key", "key"}}, "api_key.parts[1]"},
		{APIKey{In: "cookie", Parts: []string{"key", "token"}}, "api_key.in"},
	} {
		p := trello
		p.APIKey = &tt.key
		_, err := build(t.Context(), p, data)
		if e := switchboard.AsError(err); err == nil || e.Field != tt.field {
			t.Errorf("api_key %+v: err = %v, want an invalid %s", tt.key, err, tt.field)
		}
	}
	p := trello
	p.APIKey = &APIKey{In: "header", Parts: []string{"X-App-Key", "X-User-Token"}}
	headed, err := build(t.Context(), p, data)
	if err != nil {
		t.Fatal(err)
	}
	r, _ = http.NewRequest(http.MethodGet, "https://api.trello.com/1/boards/x", nil)
	headed.Authorize(r, "app:user")
	if r.Header.Get("X-App-Key") != "app" || r.Header.Get("X-User-Token") != "user" || r.URL.RawQuery != "" {
		t.Errorf("headers %v, query %q; want each part in its header", r.Header, r.URL.RawQuery)
	}
}
