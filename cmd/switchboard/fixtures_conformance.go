//go:build conformancefixture

package main

import (
	"github.com/switchboard-hub/switchboard/internal/conformancefixture"
	"github.com/switchboard-hub/switchboard/mcpadapter"
	"github.com/switchboard-hub/switchboard/providers"
)

// fixtureSpecs adds the MCP conformance suite's fixture tools to a binary built with
// -tags conformancefixture, which only the end-to-end conformance test builds.
func fixtureSpecs() []providers.Spec { return []providers.Spec{conformancefixture.Spec()} }

// fixtureExtensions adds the suite's fixture resources and prompts.
func fixtureExtensions() []mcpadapter.Extension {
	return []mcpadapter.Extension{conformancefixture.Extension()}
}

// wireFixtures lets the fixture's diagnostic tools have the adapter list a tenant's
// tools and prompts again (test_trigger_tool_change).
func wireFixtures(a *mcpadapter.Adapter) { conformancefixture.SetRefresh(a.Refresh) }
