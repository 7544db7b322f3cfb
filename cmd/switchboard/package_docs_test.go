package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryPackageSaysWhatItOwns: each package of the module (tests, testdata and
// node_modules aside) has a package comment, which go doc shows first.
func TestEveryPackageSaysWhatItOwns(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		pkgs, err := parser.ParseDir(token.NewFileSet(), path, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") },
			parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		for name, pkg := range pkgs {
			documented := false
			for _, f := range pkg.Files {
				if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
					documented = true
				}
			}
			if !documented {
				t.Errorf("package %s (%s) has no package comment saying what it owns", name, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPackageDocsNameWhereToStart: each package with exported identifiers names, in
// its package comment, the types or functions a reader starts from, as doc links
// ([Service], [Router.Execute]) that go doc and pkg.go.dev resolve; every such link
// names something the package declares, so a rename cannot leave a dead one.
func TestPackageDocsNameWhereToStart(t *testing.T) {
	root := filepath.Join("..", "..")
	link := regexp.MustCompile(`\[([A-Z][A-Za-z0-9_]*)(?:\.([A-Za-z0-9_]+))?\]`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		pkgs, err := parser.ParseDir(token.NewFileSet(), path, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") },
			parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for name, pkg := range pkgs {
			if name == "main" {
				continue
			}
			declared, methods := map[string]bool{}, map[string]bool{}
			doc := ""
			for _, f := range pkg.Files {
				if f.Doc != nil {
					doc += f.Doc.Text()
				}
				for _, decl := range f.Decls {
					switch decl := decl.(type) {
					case *ast.FuncDecl:
						if decl.Recv == nil {
							declared[decl.Name.Name] = true
						} else if len(decl.Recv.List) == 1 {
							methods[receiverName(decl.Recv.List[0].Type)+"."+decl.Name.Name] = true
						}
					case *ast.GenDecl:
						for _, spec := range decl.Specs {
							switch spec := spec.(type) {
							case *ast.TypeSpec:
								declared[spec.Name.Name] = true
							case *ast.ValueSpec:
								for _, n := range spec.Names {
									declared[n.Name] = true
								}
							}
						}
					}
				}
			}
			exported := false
			for n := range declared {
				exported = exported || ast.IsExported(n)
			}
			if !exported {
				continue // tests only (e2e, securitytest, bench): nothing to start from
			}
			links := link.FindAllStringSubmatch(doc, -1)
			if len(links) == 0 {
				t.Errorf("package %s (%s): its package comment names no type or function to start from as a doc link ([Name])", name, path)
			}
			for _, l := range links {
				if !declared[l[1]] || (l[2] != "" && !methods[l[1]+"."+l[2]]) {
					t.Errorf("package %s (%s): its package comment links %s, which the package does not declare", name, path, l[0])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// receiverName is the type a method's receiver names (T, *T, T[P]).
func receiverName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiverName(e.X)
	case *ast.IndexExpr:
		return receiverName(e.X)
	case *ast.IndexListExpr:
		return receiverName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}
