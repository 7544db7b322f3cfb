package web

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestActivityFilterListsEveryAuditKind checks that Activity's event filter offers
// every kind of audit event the hub records: each constant of type audit.Kind (Kind in
// package audit) declared anywhere in the module.
func TestActivityFilterListsEveryAuditKind(t *testing.T) {
	t.Parallel()
	page, err := templateFS.ReadFile("templates/activity.html")
	if err != nil {
		t.Fatal(err)
	}
	offered := map[string]bool{}
	for _, m := range regexp.MustCompile(`<option value="([a-z_]+)">`).FindAllStringSubmatch(string(page), -1) {
		offered[m[1]] = true
	}
	kinds := map[string]string{} // value: where it is declared
	fset := token.NewFileSet()
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(src), "Kind") {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if !isAuditKind(vs.Type, f.Name.Name) || len(vs.Values) != len(vs.Names) {
					continue
				}
				for _, v := range vs.Values {
					if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						s, _ := strconv.Unquote(lit.Value)
						kinds[s] = path
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(kinds) < 20 {
		t.Fatalf("found only %d audit kinds in the module: the scan is broken", len(kinds))
	}
	for k, where := range kinds {
		if !offered[k] {
			t.Errorf("audit kind %q (%s) is not in Activity's event filter", k, where)
		}
	}
}

// isAuditKind reports whether a constant's type is audit.Kind (or Kind inside package audit).
func isAuditKind(typ ast.Expr, pkg string) bool {
	switch x := typ.(type) {
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		return ok && id.Name == "audit" && x.Sel.Name == "Kind"
	case *ast.Ident:
		return pkg == "audit" && x.Name == "Kind"
	}
	return false
}
