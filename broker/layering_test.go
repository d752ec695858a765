package broker

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCoreUsesNoAdminIdentifiers holds the package's layering: admin.go and admin_*.go are the
// REST-facing API, which may call into the core, while the core (every other non-test file)
// never reaches back into them. Identifiers are matched by name, as the parser sees them:
// package-level names a core file uses without declaring, and methods it calls (a call, so that
// a field of another package's type, such as naming.Topic's Tenant, is not taken for the admin
// method of that name; a name the core declares as a method or field of its own is its own).
func TestCoreUsesNoAdminIdentifiers(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	isAdmin := func(name string) bool { return name == "admin.go" || strings.HasPrefix(name, "admin_") }
	parsed := map[string]*ast.File{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed[name] = f
	}

	// What the admin files declare: package-level names and methods.
	adminNames, adminMethods := map[string]string{}, map[string]string{}
	// Methods and fields the core declares itself, whose selectors are not the admin's.
	coreMembers := map[string]bool{}
	for name, f := range parsed {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				switch {
				case d.Recv != nil && isAdmin(name):
					adminMethods[d.Name.Name] = name
				case d.Recv != nil:
					coreMembers[d.Name.Name] = true
				case isAdmin(name):
					adminNames[d.Name.Name] = name
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if isAdmin(name) {
							adminNames[s.Name.Name] = name
						}
						if st, ok := s.Type.(*ast.StructType); ok && !isAdmin(name) {
							for _, fl := range st.Fields.List {
								for _, n := range fl.Names {
									coreMembers[n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						if isAdmin(name) {
							for _, n := range s.Names {
								adminNames[n.Name] = name
							}
						}
					}
				}
			}
		}
	}

	var uses []string
	for name, f := range parsed {
		if isAdmin(name) {
			continue
		}
		for _, id := range f.Unresolved {
			if from, ok := adminNames[id.Name]; ok {
				uses = append(uses, fset.Position(id.Pos()).String()+": "+id.Name+" ("+from+")")
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if from, ok := adminMethods[sel.Sel.Name]; ok && !coreMembers[sel.Sel.Name] {
				uses = append(uses, fset.Position(sel.Sel.Pos()).String()+": "+sel.Sel.Name+" ("+from+")")
			}
			return true
		})
	}
	slices.Sort(uses)
	for _, u := range uses {
		t.Errorf("core file uses an admin identifier: %s", u)
	}
}
