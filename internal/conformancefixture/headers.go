package conformancefixture

import (
	"context"
	"fmt"

	"github.com/switchboard-hub/switchboard/providers"
)

// headers is the tool of the custom-header scenario (SEP-2243): its region argument is
// annotated x-mcp-header, so a client of 2026-07-28 mirrors it into Mcp-Param-Region,
// and the hub refuses a call whose header is missing, is not valid Base64 in its
// =?base64?…?= form, or says another value than the body.
func headers() providers.Op {
	return op{name: "test_custom_headers", description: "Answers with the region it was called for, which the client also sends in the Mcp-Param-Region header.",
		input: `{"type":"object","properties":{"region":{"type":"string","description":"The region to run in","x-mcp-header":"Region"}},"required":["region"]}`,
		run: func(_ context.Context, args map[string]any) (*providers.ContentResult, error) {
			return result(text(fmt.Sprintf("Region: %v", args["region"]))), nil
		}}
}
