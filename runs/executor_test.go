package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gorm.io/gorm"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/connections"
	"github.com/switchboard-hub/switchboard/internal/notesfake"
	"github.com/switchboard-hub/switchboard/internal/testdb"
	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/router"
)

func TestRunCompletesWithOutput(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, nil)
		ctx := context.Background()
		secret := "Ann's diary: the launch slips to May"
		started, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_create_note", ConnectionID: r.connA, Args: json.RawMessage(`{"text":"` + secret + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if started.State != StateWorking || !strings.HasPrefix(started.ID, "run_") || started.Output != nil {
			t.Fatalf("started = %+v, want a working run_ without output", started)
		}
		got := r.wait(t, r.exec, r.ann, started.ID)
		if got.State != StateCompleted {
			t.Fatalf("state = %s (%+v), want completed", got.State, got.Error)
		}
		var out notesfake.Note
		if err := json.Unmarshal(got.Output, &out); err != nil {
			t.Fatalf("output %s: %v", got.Output, err)
		}
		if diff := cmp.Diff(notesfake.Note{ID: "n1", Text: secret}, out); diff != "" {
			t.Errorf("output (-want +got):\n%s", diff)
		}
		if got.StartedAt == nil || got.FinishedAt == nil || got.FinishedAt.Before(*got.StartedAt) || got.StartedAt.Before(got.CreatedAt) {
			t.Errorf("timestamps created %v started %v finished %v are not in order", got.CreatedAt, got.StartedAt, got.FinishedAt)
		}
		wantReq := []notesfake.Request{{Method: "POST", Path: "/notes", Auth: "Bearer " + notesfake.Token, Body: `{"text":"` + secret + `"}`}}
		if diff := cmp.Diff(wantReq, r.up.Requests()); diff != "" {
			t.Errorf("upstream requests (-want +got):\n%s", diff)
		}
		calls := r.audit.toolCalls()
		if len(calls) != 1 || calls[0].Tool != "notes_create_note" || calls[0].Principal != r.ann.ID() || calls[0].Outcome != "ok" || calls[0].ConnectionID != r.connA {
			t.Errorf("audit = %+v, want one ok notes_create_note call by %s on %s", calls, r.ann.ID(), r.connA)
		}
		row := r.row(t, started.ID)
		for name, blob := range map[string][]byte{"input": row.InputSealed, "output": row.OutputSealed} {
			if len(blob) == 0 || bytes.Contains(blob, []byte("diary")) {
				t.Errorf("%s is not sealed: %q", name, blob)
			}
		}
		if row.Resumable {
			t.Error("a create_note run is marked resumable; it is not idempotent")
		}
		if row.Attempts != 1 || row.LeaseUntil != nil {
			t.Errorf("attempts %d lease %v, want 1 and no lease once completed", row.Attempts, row.LeaseUntil)
		}
	})
}

func TestSealedInputIsBoundToItsRun(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, nil)
		ctx := context.Background()
		a, err := r.exec.StartConfirm(ctx, r.ann, Call{Tool: "notes_delete_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"n1"}`)}, "Delete note n1")
		if err != nil {
			t.Fatal(err)
		}
		b, err := r.exec.StartConfirm(ctx, r.ann, Call{Tool: "notes_delete_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"n2"}`)}, "Delete note n2")
		if err != nil {
			t.Fatal(err)
		}
		rowA := r.row(t, a.ID)
		if err := db.Model(&Run{}).Where("id = ?", b.ID).Update("input_sealed", rowA.InputSealed).Error; err != nil {
			t.Fatal(err)
		}
		rowB := r.row(t, b.ID)
		if _, err := r.store.input(ctx, &rowB); switchboard.CodeOf(err) != switchboard.CodeInternal {
			t.Errorf("input copied from another run opened: %v", err)
		}
		plain, err := r.store.input(ctx, &rowA)
		if err != nil || string(plain) != `{"id":"n1"}` {
			t.Errorf("input = %s, %v", plain, err)
		}
	})
}

func TestStartRefusesBadCalls(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, nil)
		tests := []struct {
			name  string
			call  Call
			code  switchboard.Code
			field string
		}{
			{name: "unknown tool", call: Call{Tool: "notes_burn", ConnectionID: r.connA}, code: switchboard.CodeNotFound},
			{name: "argument of the wrong type", call: Call{Tool: "notes_get_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":7}`)}, code: switchboard.CodeInvalid, field: "id"},
			{name: "missing argument", call: Call{Tool: "notes_create_note", ConnectionID: r.connA, Args: json.RawMessage(`{}`)}, code: switchboard.CodeInvalid, field: "text"},
			{name: "no connection", call: Call{Tool: "notes_get_note", Args: json.RawMessage(`{"id":"n1"}`)}, code: switchboard.CodeInvalid, field: "connection"},
			{name: "another tenant's connection", call: Call{Tool: "notes_get_note", ConnectionID: r.connB, Args: json.RawMessage(`{"id":"n1"}`)}, code: switchboard.CodeNotFound},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := r.exec.Start(context.Background(), r.ann, tt.call)
				wantCode(t, err, tt.code, tt.field)
			})
		}
		var n int64
		if err := db.Model(&Run{}).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n != 0 || len(r.up.Requests()) != 0 {
			t.Errorf("%d runs stored and %d upstream requests after refused calls, want none", n, len(r.up.Requests()))
		}
	})
}

func TestFailedRunsSayWhy(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, nil)
		tests := []struct {
			name     string
			call     Call
			code     string
			contains string
		}{
			{name: "upstream 404", call: Call{Tool: "notes_get_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"n404"}`)}, code: "not_found", contains: "no such note"},
			{name: "upstream 429", call: Call{Tool: "notes_limited", ConnectionID: r.connA}, code: "rate_limited", contains: "retry after 7 s"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				v, err := r.exec.Start(context.Background(), r.ann, tt.call)
				if err != nil {
					t.Fatal(err)
				}
				got := r.wait(t, r.exec, r.ann, v.ID)
				if got.State != StateFailed || got.Error == nil || got.Error.Code != tt.code || !strings.Contains(got.Error.Message, tt.contains) || got.Output != nil {
					t.Errorf("run = %s %+v, want failed %s containing %q and no output", got.State, got.Error, tt.code, tt.contains)
				}
			})
		}
		for _, req := range r.up.Requests() {
			if req.Auth != "Bearer "+notesfake.Token {
				t.Errorf("upstream got %s %s with %q", req.Method, req.Path, req.Auth)
			}
		}
	})
}

func TestOnlyTheCallerSeesItsRuns(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, nil)
		ctx := context.Background()
		done, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_create_note", ConnectionID: r.connA, Args: json.RawMessage(`{"text":"mine"}`)})
		if err != nil {
			t.Fatal(err)
		}
		r.wait(t, r.exec, r.ann, done.ID)
		pending, err := r.exec.StartConfirm(ctx, r.ann, Call{Tool: "notes_delete_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"n1"}`)}, "Delete note n1")
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range []struct {
			name string
			p    switchboard.Principal
		}{{name: "another tenant", p: r.bea}, {name: "another user of the tenant", p: r.bob}} {
			t.Run(other.name, func(t *testing.T) {
				for _, id := range []string{done.ID, pending.ID, "run_missing"} {
					_, err := r.exec.Get(ctx, other.p, id)
					wantCode(t, err, switchboard.CodeNotFound, "")
					if err.Error() != switchboard.NotFound("run").Error() {
						t.Errorf("get %s: %v, want the answer of a missing run", id, err)
					}
					_, err = r.exec.Cancel(ctx, other.p, id)
					wantCode(t, err, switchboard.CodeNotFound, "")
					_, err = r.exec.Answer(ctx, other.p, id, "accept")
					wantCode(t, err, switchboard.CodeNotFound, "")
				}
				list, next, err := r.exec.List(ctx, other.p, ListOptions{})
				if err != nil || len(list) != 0 || next != "" {
					t.Errorf("list = %v %q %v, want empty", list, next, err)
				}
			})
		}
		if got := r.row(t, pending.ID); got.State != StateInputRequired {
			t.Errorf("pending run is %s after others tried it, want input_required", got.State)
		}
		if r.up.Has("n1") != true {
			t.Error("note n1 was deleted by another principal's answer")
		}
	})
}

func TestListPagesNewestFirst(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, nil)
		ctx := context.Background()
		var ids []string
		for range 3 {
			v, err := r.exec.StartConfirm(ctx, r.ann, Call{Tool: "notes_delete_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"n1"}`)}, "Delete note n1")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, v.ID)
		}
		if _, err := r.exec.Cancel(ctx, r.ann, ids[0]); err != nil {
			t.Fatal(err)
		}
		page1, next, err := r.exec.List(ctx, r.ann, ListOptions{Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		page2, last, err := r.exec.List(ctx, r.ann, ListOptions{Limit: 2, Cursor: next})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range append(page1, page2...) {
			got = append(got, v.ID)
		}
		if diff := cmp.Diff([]string{ids[2], ids[1], ids[0]}, got); diff != "" || next == "" || last != "" {
			t.Errorf("pages (-want +got):\n%s (cursors %q, %q)", diff, next, last)
		}
		canceled, _, err := r.exec.List(ctx, r.ann, ListOptions{State: StateCanceled})
		if err != nil || len(canceled) != 1 || canceled[0].ID != ids[0] {
			t.Errorf("canceled runs = %v, %v; want %s", canceled, err, ids[0])
		}
		tests := []struct {
			name  string
			o     ListOptions
			field string
		}{
			{name: "limit too large", o: ListOptions{Limit: 101}, field: "limit"},
			{name: "negative limit", o: ListOptions{Limit: -1}, field: "limit"},
			{name: "unknown state", o: ListOptions{State: "done"}, field: "state"},
			{name: "forged cursor", o: ListOptions{Cursor: "not-a-cursor"}, field: "cursor"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, _, err := r.exec.List(ctx, r.ann, tt.o)
				wantCode(t, err, switchboard.CodeInvalid, tt.field)
			})
		}
	})
}

// echoRunner answers every call with its arguments, like a remote MCP server's tool.
type echoRunner struct{}

func (echoRunner) Execute(_ context.Context, _ switchboard.Principal, req router.Request) (any, error) {
	return json.RawMessage(req.Args), nil
}

// TestRunOfAToolOutsideTheRegistry: a connection's own tool (as a remote MCP server's)
// runs once the router, as the executor's gate, finds it among the connection's tools
// and checks its arguments against the tool's schema; the registry alone (no gate)
// does not know it.
func TestRunOfAToolOutsideTheRegistry(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		spec := &providers.Spec{Name: "own", Title: "Own tools"}
		spec.Tools = func(context.Context, providers.Connection) ([]*providers.Tool, error) {
			op := &providers.Operation[notesfake.NewNote, notesfake.NewNote]{Name: "echo", Title: "Echo", Description: "Echo the text.", Hints: providers.Hints{ReadOnly: true}}
			tool, err := providers.NewConnectionTool(spec, "remote_echo", op, json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`), nil)
			return []*providers.Tool{tool}, err
		}
		r := newRigWith(t, db, func(o *Options) { o.Gate, o.Runner = o.Runner.(Gate), echoRunner{} }, *spec)
		ctx := context.Background()
		c := connections.Connection{Provider: "own", OwnerUserID: r.ann.UserID, AuthKind: providers.AuthNone, AccountID: "docs", AccountLabel: "docs", Shared: true}
		if err := connections.NewStore(r.db, r.kr).Create(ctx, r.ann.TenantID, &c, connections.Credentials{}); err != nil {
			t.Fatal(err)
		}
		noGate := r.newExecutor(t, func(o *Options) { o.Runner = echoRunner{} })
		_, err := noGate.Start(ctx, r.ann, Call{Tool: "remote_echo", ConnectionID: c.ID, Args: json.RawMessage(`{"text":"hi"}`)})
		wantCode(t, err, switchboard.CodeInvalid, "tool")
		_, err = r.exec.Start(ctx, r.ann, Call{Tool: "remote_nope", ConnectionID: c.ID, Args: json.RawMessage(`{}`)})
		wantCode(t, err, switchboard.CodeNotFound, "")
		_, err = r.exec.Start(ctx, r.ann, Call{Tool: "remote_echo", ConnectionID: c.ID, Args: json.RawMessage(`{"text":3}`)})
		wantCode(t, err, switchboard.CodeInvalid, "text")
		v, err := r.exec.Start(ctx, r.ann, Call{Tool: "remote_echo", ConnectionID: c.ID, Args: json.RawMessage(`{"text":"hi"}`)})
		if err != nil {
			t.Fatal(err)
		}
		got := r.wait(t, r.exec, r.ann, v.ID)
		if got.State != StateCompleted || string(got.Output) != `{"text":"hi"}` || !r.row(t, v.ID).Resumable {
			t.Errorf("run = %s %s, resumable %v", got.State, got.Output, r.row(t, v.ID).Resumable)
		}
	})
}

// askingRunner asks the call's client (providers.Caller) and answers with its answer,
// or says there is no client.
type askingRunner struct{}

func (askingRunner) Execute(ctx context.Context, _ switchboard.Principal, _ router.Request) (any, error) {
	c := providers.CallerFrom(ctx)
	if c == nil {
		return json.RawMessage(`"no client"`), nil
	}
	return c.Ask(ctx, "elicitation/create", json.RawMessage(`{}`))
}

// answeringCaller answers every request with a fixed result.
type answeringCaller struct{ answer json.RawMessage }

func (answeringCaller) Log(map[string]any) {}

func (a answeringCaller) Ask(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return a.answer, nil
}

// TestRunTurnsToItsCaller: a run started with a Caller (an MCP task's client) executes
// with it, so the call may ask its client; one started without has none.
func TestRunTurnsToItsCaller(t *testing.T) {
	t.Parallel()
	testdb.Each(t, func(t *testing.T, db *gorm.DB) {
		t.Parallel()
		r := newRig(t, db, func(o *Options) { o.Gate, o.Runner = o.Runner.(Gate), askingRunner{} })
		ctx := context.Background()
		for _, tt := range []struct {
			caller providers.Caller
			want   string
		}{
			{caller: answeringCaller{answer: json.RawMessage(`{"action":"accept"}`)}, want: `{"action":"accept"}`},
			{want: `"no client"`},
		} {
			v, err := r.exec.Start(ctx, r.ann, Call{Tool: "notes_get_note", ConnectionID: r.connA, Args: json.RawMessage(`{"id":"n1"}`), Caller: tt.caller})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.wait(t, r.exec, r.ann, v.ID); got.State != StateCompleted || string(got.Output) != tt.want {
				t.Errorf("run with caller %v = %s %s, want completed %s", tt.caller, got.State, got.Output, tt.want)
			}
		}
	})
}
