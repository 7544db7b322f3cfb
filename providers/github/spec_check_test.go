package github_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard/providers/github"
)

// specCheckedCases returns every case that calls an operation through a fake GitHub
// and checks, for each request the operation sends, the request against GitHub's
// OpenAPI description (CheckRequest: path template, parameters, body schema) and the
// fake's answer against the operation's response schema (CheckResponse): opCase.run
// does both. A new case table belongs here.
func specCheckedCases() []opCase {
	return slices.Concat(
		searchRepositoriesCases(), searchMoreCases(), getFileContentsCases(), contentsWriteCases(), repoCases(),
		issueCases(), releaseLabelMilestoneCases(), pullCases(), pullReviewCases(), actionsCases(), accountCases(),
	)
}

// TestEveryOperationCheckedAgainstDescription fails when an operation of the Spec has
// no case in specCheckedCases, or a case names a tool the Spec lacks, so no operation
// ships without its requests checked against GitHub's description.
func TestEveryOperationCheckedAgainstDescription(t *testing.T) {
	t.Parallel()
	checked := map[string]bool{}
	for _, tc := range specCheckedCases() {
		checked[tc.tool] = true
		for i, x := range tc.exchanges() {
			if x.opID == "" || x.method == "" || x.path == "" {
				t.Errorf("case %q: request %d names no method, path or GitHub operation to check against", tc.name, i+1)
			}
		}
	}
	var ops []string
	spec := github.Spec()
	for _, op := range spec.Operations {
		ops = append(ops, "github_"+op.Info().Name)
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(ops)), slices.Sorted(mapKeys(checked))); diff != "" {
		t.Errorf("operations (-in the Spec +with a description-checked case):\n%s", diff)
	}
	if len(ops) < 45 {
		t.Errorf("the Spec has %d operations, want at least 45", len(ops))
	}
}

// mapKeys yields the keys of m.
func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
