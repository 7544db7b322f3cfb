package openapis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers/openapi"
)

// TestAddRefusesBeforeParsing: an inline description larger than MaxDescription, or
// nesting deeper than openapi.MaxDepth, is an invalid "description" error that names
// the bound, found before parsing (each is broken past the bound, which a parser would
// name instead), and nothing is stored.
func TestAddRefusesBeforeParsing(t *testing.T) {
	t.Parallel()
	db := testdb.SQLite(t)
	deep := `{"openapi":"3.0.3","x":` + strings.Repeat(`{"a":`, openapi.MaxDepth) + `[`
	tests := []struct {
		name        string
		description string
		says        string
	}{
		{name: "too large", description: `{"openapi":"3.0.3","x":"` + strings.Repeat("a", MaxDescription) + `[`, says: fmt.Sprintf("larger than %d MB", MaxDescription>>20)},
		{name: "too deep", description: deep, says: fmt.Sprintf("more than %d levels deep", openapi.MaxDepth)},
		{name: "too deep as a string", description: `"` + strings.ReplaceAll(deep, `"`, `\"`) + `"`, says: fmt.Sprintf("more than %d levels deep", openapi.MaxDepth)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, db, nil)
			_, err := r.svc.Add(t.Context(), r.admin, AddInput{Name: "items", Description: []byte(tt.description)})
			if e := switchboard.AsError(err); e.Code != switchboard.CodeInvalid || e.Field != "description" || !strings.Contains(e.Message, tt.says) {
				t.Fatalf("Add: %v, want an invalid description error saying %q", err, tt.says)
			}
			if apis, err := r.svc.List(t.Context(), r.admin); err != nil || len(apis) != 0 {
				t.Errorf("after a refusal: %v, %v, want nothing stored", apis, err)
			}
		})
	}
}

// TestParseEnds: a parse whose request has ended returns the request's context's error
// (not an invalid description, though the parse's own deadline ended too); one over
// its budget is an invalid description saying so. (openapi's TestLoadStopsWhenCanceled
// shows a parse stopping when its context ends while it runs.)
func TestParseEnds(t *testing.T) {
	t.Parallel()
	o := openapi.Options{Name: "items"}
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err := parse(gone, []byte(describedAPI), o)
	if !errors.Is(err, context.Canceled) || switchboard.CodeOf(err) == switchboard.CodeInvalid {
		t.Errorf("canceled while parsing: %v, want the context's error", err)
	}
	_, _, err = parseWithin(t.Context(), []byte(describedAPI), o, 0)
	if e := switchboard.AsError(err); e.Code != switchboard.CodeInvalid || e.Field != "description" || !strings.Contains(e.Message, "took longer than") {
		t.Errorf("over the budget: %v, want an invalid description error saying it took too long", err)
	}
	if _, _, err := parse(t.Context(), []byte(describedAPI), o); err != nil {
		t.Errorf("within the budget: %v", err)
	}
}
