package mcpadapter

import (
	"context"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/switchboard-hub/switchboard/audit"
	"github.com/switchboard-hub/switchboard/router"
)

// committedRows is a recorder that commits, keeping the rows.
type committedRows struct {
	mu   sync.Mutex
	rows []audit.Event
}

func (c *committedRows) Record(e audit.Event) { _ = c.Commit(context.Background(), e) }

func (c *committedRows) Commit(_ context.Context, e audit.Event) error {
	if e.Outcome == audit.OutcomeInFlight {
		return nil // the call's completed row, of the same id, follows: that one is kept
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rows = append(c.rows, e)
	return nil
}

// TestResultNamesItsAuditRow: a tool result's _meta names the audit row the call left,
// answered or failed, so a client can show an operator which row is its call's.
func TestResultNamesItsAuditRow(t *testing.T) {
	t.Parallel()
	rec := &committedRows{}
	e := newEnvWith(t, nil, func(o *router.Options) { o.Audit = rec })
	c, err := e.client(t, "acme", "key-alice")
	if err != nil {
		t.Fatal(err)
	}
	ok := call(t, c, "notes_create_note", map[string]any{"text": "hi"})
	failed := call(t, c, "notes_create_note", map[string]any{"text": 5})
	if ok.IsError || !failed.IsError {
		t.Fatalf("first call error %v, second %v; want an answer, then a refusal", ok.IsError, failed.IsError)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.rows) != 2 {
		t.Fatalf("%d audit rows, want 2", len(rec.rows))
	}
	for i, res := range []struct {
		name string
		meta map[string]any
	}{{"answered", metaOf(ok.Meta)}, {"refused", metaOf(failed.Meta)}} {
		if got := res.meta[AuditIDMeta]; got != rec.rows[i].ID || got == "" {
			t.Errorf("%s call: _meta %s = %v, want its row's id %q", res.name, AuditIDMeta, got, rec.rows[i].ID)
		}
	}
}

// metaOf is a result's _meta fields.
func metaOf(m *mcp.Meta) map[string]any {
	if m == nil {
		return nil
	}
	return m.AdditionalFields
}
