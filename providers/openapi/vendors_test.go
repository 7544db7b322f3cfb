package openapi

import (
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/schemacheck"
)

// vendorsAccept checks imported tools against each vendor's documented rules for
// function schemas (schemacheck.Vendors): as the full profile lists them, each
// vendor refuses some (else the check shows nothing); as the portable profiles list
// them, none.
func vendorsAccept(t *testing.T, tools []*providers.Tool) {
	t.Helper()
	before := schemacheck.Tools(tools, providers.ProfileFull)
	for _, r := range schemacheck.Vendors {
		if len(before[r.Vendor]) == 0 {
			t.Errorf("%s accepts every tool as the full profile lists it: the check shows nothing", r.Vendor)
		}
		t.Logf("%s refuses %d of %d tools as the full profile lists them", r.Vendor, len(before[r.Vendor]), len(tools))
	}
	for vendor, bad := range schemacheck.Tools(tools, "") {
		t.Errorf("%s refuses %d tools as their profile lists them, first %v", vendor, len(bad), bad[:min(len(bad), 5)])
	}
}
