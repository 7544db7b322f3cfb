package providertest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-hub/switchboard/providers"
	"github.com/switchboard-hub/switchboard/providers/providertest"
)

type catalogIn struct {
	Repo  string `json:"repo" jsonschema:"Repository as owner/name" schema:"example=octocat/hello-world"`
	State string `json:"state" jsonschema:"Issue state" schema:"enum=open|closed"`
}

type bareIn struct {
	Repo string `json:"repo" jsonschema:"Repository"`
}

type catalogOut struct {
	Count int `json:"count" jsonschema:"How many issues there are"`
}

const goodDescription = "List the issues of one repository, newest first. Use it to browse; use search_issues to find by text. Returns each issue's number, title and state."

func catalogOp[In any](name, desc string, h providers.Hints, docs string) providers.Op {
	return &providers.Operation[In, catalogOut]{
		Name: name, Title: "Op", Description: desc, DocsURL: docs, Hints: h,
		Run: func(context.Context, *providers.Call, In) (catalogOut, error) { return catalogOut{}, nil },
	}
}

func verifyNobody(context.Context, *providers.Call) (providers.Account, error) {
	return providers.Account{}, nil
}

func TestCatalogProblems(t *testing.T) {
	t.Parallel()
	docs := "https://docs.example.com/op"
	tests := []struct {
		name string
		op   providers.Op
		want string // a substring of the one expected problem; "" for none
	}{
		{name: "fit", op: catalogOp[catalogIn]("list_issues", goodDescription, providers.Hints{ReadOnly: true}, docs)},
		{name: "short description", op: catalogOp[catalogIn]("list_issues", "Lists issues. Returns them.", providers.Hints{ReadOnly: true}, docs), want: "too short"},
		{name: "no returns", op: catalogOp[catalogIn]("list_issues", strings.ReplaceAll(goodDescription, "Returns", "Gives"), providers.Hints{ReadOnly: true}, docs), want: "returns"},
		{name: "no docs", op: catalogOp[catalogIn]("list_issues", goodDescription, providers.Hints{ReadOnly: true}, ""), want: "DocsURL"},
		{name: "list not read-only", op: catalogOp[catalogIn]("list_issues", goodDescription, providers.Hints{}, docs), want: "must be ReadOnly"},
		{name: "delete not destructive", op: catalogOp[catalogIn]("delete_issue", goodDescription, providers.Hints{Idempotent: true}, docs), want: "must be Destructive"},
		{name: "read-only and destructive", op: catalogOp[catalogIn]("close_issue", goodDescription, providers.Hints{ReadOnly: true, Destructive: true}, docs), want: "both ReadOnly and Destructive"},
		{name: "parameter without example", op: catalogOp[bareIn]("list_issues", goodDescription, providers.Hints{ReadOnly: true}, docs), want: "parameter repo needs an example"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := providers.NewRegistry()
			spec := providers.Spec{Name: "fake", Title: "Fake", Description: "A fake.", DocsURL: docs, AuthKinds: []providers.AuthKind{providers.AuthAPIKey}, Verify: verifyNobody, Operations: []providers.Op{tt.op}}
			if err := reg.Register(spec); err != nil {
				t.Fatal(err)
			}
			got := providertest.CatalogProblems(reg.Tools("fake")[0])
			switch {
			case tt.want == "" && len(got) != 0:
				t.Errorf("problems = %q, want none", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)):
				t.Errorf("problems = %q, want exactly one containing %q", got, tt.want)
			}
		})
	}
}
