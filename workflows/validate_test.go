package workflows

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/router"
)

const goodYAML = `
name: triage
description: Read the failures and write one note each
category: ops
parameters:
  type: object
  properties:
    key: {type: string}
    limit: {type: integer}
  required: [key]
parallel_limit: 2
timeout: 2m
steps:
  - name: fetch
    tool: flow_read
    connection: main
    args:
      key: ${{ params.key }}
      n: ${{ params.limit + 1 }}
    on_error: retry
    retry: {attempts: 4, backoff: 10ms}
    timeout: 30s
  - name: note
    tool: flow_write
    connection: main
    needs: [fetch]
    if: ${{ steps.fetch.output.count > 0 }}
    foreach: ${{ steps.fetch.output.items }}
    args:
      text: "failed: ${{ item }} (${{ index }})"
      priority: 2
  - name: summary
    tool: flow_write
    connection: main
    needs: [note]
    on_error: continue
    args:
      text: ${{ string(size(steps.note.output)) + " notes" }}
outputs:
  notes: ${{ steps.note.output }}
  first: ${{ steps.fetch.output.value }}
`

const goodJSON = `{"name":"triage","description":"Read the failures and write one note each","category":"ops",
"parameters":{"type":"object","properties":{"key":{"type":"string"},"limit":{"type":"integer"}},"required":["key"]},
"parallel_limit":2,"timeout":"2m","steps":[
{"name":"fetch","tool":"flow_read","connection":"main","args":{"key":"${{ params.key }}","n":"${{ params.limit + 1 }}"},"on_error":"retry","retry":{"attempts":4,"backoff":"10ms"},"timeout":30},
{"name":"note","tool":"flow_write","connection":"main","needs":["fetch"],"if":"${{ steps.fetch.output.count > 0 }}","foreach":"${{ steps.fetch.output.items }}","args":{"text":"failed: ${{ item }} (${{ index }})","priority":2}},
{"name":"summary","tool":"flow_write","connection":"main","needs":["note"],"on_error":"continue","args":{"text":"${{ string(size(steps.note.output)) + \" notes\" }}"}}],
"outputs":{"notes":"${{ steps.note.output }}","first":"${{ steps.fetch.output.value }}"}}`

var alice = switchboard.Principal{TenantID: "ten_a", Kind: switchboard.PrincipalUser, UserID: "usr_alice"}

func testCatalog(t testing.TB) staticCatalog {
	var hook flowHook
	return staticCatalog{reg: flowRegistry(t, &hook), conns: []router.ConnectionRef{
		{ID: "con_main", Label: "main", Account: "main"}, {ID: "con_other", Label: "other", Account: "other"}}}
}

func TestYAMLAndJSONAreOneSchema(t *testing.T) {
	t.Parallel()
	y, err := Parse([]byte(goodYAML))
	if err != nil {
		t.Fatalf("parse YAML: %v", err)
	}
	j, err := Parse([]byte(goodJSON))
	if err != nil {
		t.Fatalf("parse JSON: %v", err)
	}
	// 30 (seconds) and "30s" are one duration.
	if diff := cmp.Diff(y, j); diff != "" {
		t.Fatalf("YAML and JSON differ (-yaml +json):\n%s", diff)
	}
	prog, err := Compile(y)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	b, err := Check(context.Background(), prog, testCatalog(t), alice)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	if b["fetch"].ConnectionID != "con_main" || b["note"].Tool.Name != "flow_write" {
		t.Fatalf("bindings = %+v", b)
	}
	if prog.ParallelLimit() != 2 || prog.Timeout().String() != "2m0s" {
		t.Fatalf("limit %d timeout %s", prog.ParallelLimit(), prog.Timeout())
	}
}

// edit applies a change to the good definition (as YAML text replacements).
func edit(pairs ...string) string {
	s := goodYAML
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			panic("edit: no " + pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

func TestValidationNamesStepAndField(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	cases := []struct {
		name, src   string
		step, field string
		says        string
	}{
		{"unknown field", edit("    timeout: 30s", "    timout: 30s"), "fetch", "timout", "did you mean timeout"},
		{"unknown top field", edit("category: ops", "categories: ops"), "", "categories", "not a field"},
		{"bad name", edit("name: triage", "name: Triage-1"), "", "name", "lowercase"},
		{"name of a version's tool", edit("name: triage", "name: triage_2"), "", "name", "version 2 of workflow triage; rename it, for example triage_v2"},
		{"no steps", "name: x\nsteps: []\n", "", "steps", "at least one"},
		{"duplicate step", edit("  - name: summary", "  - name: note"), "note", "name", "unique"},
		{"unknown need", edit("needs: [fetch]", "needs: [fetc]"), "note", "needs", `"fetc"`},
		{"cycle", edit("  - name: fetch\n    tool: flow_read", "  - name: fetch\n    needs: [summary]\n    tool: flow_read"), "fetch", "needs", "cycle"},
		{"bad on_error", edit("on_error: continue", "on_error: ignore"), "summary", "on_error", "abort, continue or retry"},
		{"retry without on_error", edit("on_error: continue", "retry: {attempts: 2}"), "summary", "retry", "only with on_error: retry"},
		{"too many attempts", edit("attempts: 4", "attempts: 40"), "fetch", "retry.attempts", "between 1 and 10"},
		{"bad duration", edit("timeout: 2m", "timeout: soon"), "", "timeout", "duration"},
		{"expression does not compile", edit("${{ params.limit + 1 }}", "${{ params.limit + }}"), "fetch", "args.n", "Syntax error"},
		{"undeclared variable", edit("${{ params.key }}", "${{ parms.key }}"), "fetch", "args.key", "undeclared reference"},
		{"item outside foreach", edit("${{ string(size(steps.note.output))", "${{ item"), "summary", "args.text", "undeclared reference to 'item'"},
		{"unknown parameter", edit("${{ params.key }}", "${{ params.kee }}"), "fetch", "args", "no field kee"},
		{"step not needed", edit("needs: [note]", "needs: []"), "summary", "args", "does not need"},
		{"unknown step", edit("${{ steps.fetch.output.value }}", "${{ steps.fech.output.value }}"), "", "outputs", "not a step"},
		{"if not bool", edit("${{ steps.fetch.output.count > 0 }}", "${{ 'yes' }}"), "note", "if", "true or false"},
		{"foreach not a list", edit("${{ steps.fetch.output.items }}", "${{ 3 }}"), "note", "foreach", "list"},
		{"foreach output is a list", edit("notes: ${{ steps.note.output }}", "notes: ${{ steps.note.output.id }}"), "", "outputs", "output is a list"},
		{"secret literal", edit("priority: 2", "priority: 2\n      token: abc"), "note", "args.token", "secrets never go"},
		{"secret pattern", edit(`text: "failed: ${{ item }} (${{ index }})"`, `text: "xoxb-1234567890-abcdefghij"`), "note", "args.text", "Slack token"},
		{"parallel limit", edit("parallel_limit: 2", "parallel_limit: 99"), "", "parallel_limit", "between 1 and 32"},
		{"parameters not object", edit("  type: object\n  properties:\n    key", "  type: string\n  properties:\n    key"), "", "parameters", "object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			def, err := Parse([]byte(c.src))
			if err == nil {
				var prog *Program
				if prog, err = Compile(def); err == nil {
					_, err = Check(context.Background(), prog, cat, alice)
				}
			}
			ps := ProblemsOf(err)
			if len(ps) == 0 {
				t.Fatalf("err = %v, want problems", err)
			}
			for _, p := range ps {
				if p.Step == c.step && p.Field == c.field && strings.Contains(p.Message, c.says) {
					return
				}
			}
			t.Fatalf("no problem at step %q field %q saying %q; got %v", c.step, c.field, c.says, ps)
		})
	}
}

func TestCheckAgainstTheCallersTools(t *testing.T) {
	t.Parallel()
	cat := testCatalog(t)
	cases := []struct {
		name, src   string
		who         switchboard.Principal
		step, field string
		says        string
	}{
		{"unknown tool", edit("tool: flow_read", "tool: flow_reed"), alice, "fetch", "tool", "not a tool you may call"},
		{"another tenant has no such tool", goodYAML, switchboard.Principal{TenantID: "ten_b", UserID: "usr_b"}, "fetch", "tool", "not a tool you may call"},
		{"unknown connection", edit("connection: main", "connection: mian"), alice, "fetch", "connection", `"mian" is not one of your`},
		{"connection needed", edit("    connection: main\n    args:\n      key", "    args:\n      key"), alice, "fetch", "connection", "several Flow connections"},
		{"retry on a write", edit("on_error: continue", "on_error: retry"), alice, "summary", "on_error", "only for read-only or idempotent"},
		{"missing argument", edit(`      text: "failed: ${{ item }} (${{ index }})"
`, ``), alice, "note", "args.text", "required by flow_write"},
		{"unknown argument", edit("priority: 2", "prio: 2"), alice, "note", "args.prio", "not an argument of flow_write"},
		{"literal out of range", edit("priority: 2", "priority: 9"), alice, "note", "args.priority", "9"},
		{"literal of the wrong type", edit("priority: 2", "priority: high"), alice, "note", "args.priority", "must be integer"},
		{"expression of the wrong type", edit("priority: 2", "priority: ${{ 'high' }}"), alice, "note", "args.priority", "gives string"},
		{"output field of the wrong type", edit("${{ params.key }}", "${{ steps.x.output.count }}", "  - name: fetch\n", "  - name: x\n    tool: flow_read\n    connection: main\n    args: {key: a}\n  - name: fetch\n    needs: [x]\n"), alice, "fetch", "args.key", "gives integer"},
		{"unknown output field", edit("${{ steps.fetch.output.value }}", "${{ steps.fetch.output.valeu }}"), alice, "", "outputs", "no field valeu"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			def, err := Parse([]byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			prog, err := Compile(def)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Check(context.Background(), prog, cat, c.who)
			ps := ProblemsOf(err)
			for _, p := range ps {
				if p.Step == c.step && p.Field == c.field && strings.Contains(p.Message, c.says) {
					return
				}
			}
			t.Fatalf("no problem at step %q field %q saying %q; got %v", c.step, c.field, c.says, err)
		})
	}
}

// TestStepConnectionIDWinsOverLabels: a step that names a connection by its id runs on
// that connection, even when another connection of the caller's (a colleague's shared
// one) is labelled with that id, whichever is listed first.
func TestStepConnectionIDWinsOverLabels(t *testing.T) {
	t.Parallel()
	var hook flowHook
	squat := router.ConnectionRef{ID: "con_squat", Label: "con_main", Account: "con_main"}
	main := router.ConnectionRef{ID: "con_main", Label: "main", Account: "main"}
	cat := staticCatalog{reg: flowRegistry(t, &hook), conns: []router.ConnectionRef{squat, main}}
	def, err := Parse([]byte(strings.ReplaceAll(goodYAML, "connection: main", "connection: con_main")))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	prog, err := Compile(def)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	b, err := Check(context.Background(), prog, cat, alice)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	for _, step := range []string{"fetch", "note", "summary"} {
		if got := b[step].ConnectionID; got != "con_main" {
			t.Errorf("step %s runs on %q, want con_main", step, got)
		}
	}
}

// TestEveryProblemInOnePass: a definition with a bad name, a misspelt tool in one step
// and a missing argument in another hears of all three in one answer, not in rounds.
func TestEveryProblemInOnePass(t *testing.T) {
	t.Parallel()
	src := edit("name: triage", "name: Triage-1", "tool: flow_read", "tool: flow_reed", `      text: "failed: ${{ item }} (${{ index }})"
`, ``)
	def, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = CompileAndCheck(context.Background(), def, testCatalog(t), alice)
	var got []string
	for _, p := range ProblemsOf(err) {
		got = append(got, p.Step+" "+p.Field)
	}
	if want := []string{" name", "fetch tool", "note args.text"}; !cmp.Equal(got, want) {
		t.Errorf("problems %v (%v), want %v in one answer", got, err, want)
	}
	// A good definition compiles and checks.
	def, err = Parse([]byte(goodYAML))
	if err != nil {
		t.Fatal(err)
	}
	if prog, bound, err := CompileAndCheck(context.Background(), def, testCatalog(t), alice); err != nil || prog == nil || len(bound) != 3 {
		t.Errorf("the good definition: %v, %d steps bound", err, len(bound))
	}
}
