// Package all is the explicit list of every provider Switchboard ships. Wiring code
// calls Register on a fresh registry; nothing registers itself.
//
// Start from [Register] and [Specs].
package all

import (
	"fmt"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/airtable"
	"github.com/switchboard-hub/switchboard/providers/github"
	"github.com/switchboard-hub/switchboard/providers/hubspot"
	"github.com/switchboard-hub/switchboard/providers/jira"
	"github.com/switchboard-hub/switchboard/providers/linear"
	"github.com/switchboard-hub/switchboard/providers/notion"
	"github.com/switchboard-hub/switchboard/providers/slack"
)

// Specs returns every provider's Spec, in the order the catalog lists them.
func Specs() []providers.Spec {
	return []providers.Spec{
		github.Spec(),
		slack.Spec(),
		notion.Spec(),
		linear.Spec(),
		jira.Spec(),
		airtable.Spec(),
		hubspot.Spec(),
	}
}

// Register adds every provider to the registry.
func Register(r *providers.Registry) error {
	for _, s := range Specs() {
		if err := r.Register(s); err != nil {
			return fmt.Errorf("register providers: %w", err)
		}
	}
	return nil
}
