package slack

import (
	"net/http"
	"testing"

	"github.com/switchboard-hub/switchboard/providers/providertest"
)

// TestMinimalAnswersMatchOutputSchemas calls every operation (each of operationCases)
// against a fake Slack that gives, for each described method, the least answer
// Slack's description allows (MinimalResponse: required fields only, null where they
// are nullable), and validates the structuredContent the hub would send against the
// operation's output schema, full and as tools/list serves it: MCP clients refuse a
// result that does not match. The methods the description lacks (undescribedMethods)
// keep their canned answers.
func TestMinimalAnswersMatchOutputSchemas(t *testing.T) {
	t.Parallel()
	desc := providertest.SlackDescription(t)
	for _, c := range operationCases(t) {
		t.Run(c.tool, func(t *testing.T) {
			t.Parallel()
			answers := make([]answer, len(c.answers))
			copy(answers, c.answers)
			for i, op := range c.ops {
				if i >= len(answers) || answers[i].status != 0 && answers[i].status != http.StatusOK {
					continue
				}
				if _, undescribed := undescribedFor(c.requests[i].path); undescribed {
					continue
				}
				answers[i].body = string(desc.MinimalResponse(t, op, http.StatusOK))
			}
			f := newFake(t, answers...)
			got, err := invoke(t, f.call, c.tool, c.args)
			if err != nil {
				t.Fatalf("%s on Slack's least answers %v: %v", c.tool, answers, err)
			}
			providertest.CheckListedOutput(t, tool(t, c.tool), got)
		})
	}
}
