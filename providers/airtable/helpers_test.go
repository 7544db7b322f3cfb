package airtable_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/airtable"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// testToken is the personal access token the fake upstream expects.
const testToken = "patAbCdEfGhIjKlMn.0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// tools returns Spec()'s tools by name.
func tools(t *testing.T) map[string]*providers.Tool {
	t.Helper()
	return providertest.Tools(t, airtable.Spec())
}

// newCall returns a Call for the Airtable spec whose client talks to baseURL.
func newCall(t *testing.T, baseURL string) *providers.Call {
	t.Helper()
	spec := airtable.Spec()
	return providertest.NewCall(t, &spec, baseURL, testToken)
}

// opCase is one operation called against a fake Airtable that answers reply.
type opCase struct {
	name  string
	tool  string
	args  string
	reply string
	// What must have been sent.
	wantMethod string
	wantPath   string
	wantQuery  url.Values
	wantBody   map[string]any // nil: no body
	want       any
}

func (tc opCase) run(t *testing.T) {
	t.Helper()
	up := providertest.NewUpstream(t, providertest.Answer(http.StatusOK, nil, tc.reply))
	tool := tools(t)[tc.tool]
	out, err := providertest.Invoke(t, tool, newCall(t, up.URL), tc.args)
	if err != nil {
		t.Fatalf("%s: %v", tc.tool, err)
	}
	if diff := cmp.Diff(tc.want, out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	providertest.CheckOutput(t, tool, out)
	reqs := up.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream got %d requests, want 1", len(reqs))
	}
	providertest.CheckJSONRequest(t, reqs[0], providertest.WantJSONRequest{
		Method: tc.wantMethod, Path: tc.wantPath, Query: tc.wantQuery, Body: tc.wantBody, Token: testToken,
	})
}
