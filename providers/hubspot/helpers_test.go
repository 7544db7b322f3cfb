package hubspot_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/hubspot"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// testToken is the private app access token the fake upstream expects.
const testToken = "pat-na1-11a2b3c4-d5e6-47f8-9a0b-1c2d3e4f5a6b"

// tools returns Spec()'s tools by name.
func tools(t *testing.T) map[string]*providers.Tool {
	t.Helper()
	return providertest.Tools(t, hubspot.Spec())
}

// newCall returns a Call for the HubSpot spec whose client talks to baseURL.
func newCall(t *testing.T, baseURL string) *providers.Call {
	t.Helper()
	spec := hubspot.Spec()
	call := providertest.NewCall(t, &spec, baseURL, testToken)
	call.Meta = map[string]string{"portal_id": testPortal, "ui_domain": "app-eu1.hubspot.com", "time_zone": "Europe/Berlin"}
	return call
}

// testPortal is the HubSpot account the connection belongs to.
const testPortal = "62515"

// opCase is one operation called against a fake HubSpot that answers reply.
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
