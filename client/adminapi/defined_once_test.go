package adminapi_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// jsonTypes returns the struct types declared in dir's non-test files that carry JSON names,
// each with the set of its JSON names: named types as "pkg.Name", and struct types written in
// place (a body read into `var out struct{...}`) as "pkg.file:line", which are documents too.
func jsonTypes(t *testing.T, dir string) map[string]map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		named := map[*ast.StructType]string{}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeSpec:
				if st, ok := n.Type.(*ast.StructType); ok {
					named[st] = f.Name.Name + "." + n.Name.Name
				}
			case *ast.StructType:
				tags := jsonNames(n)
				if len(tags) == 0 {
					return true
				}
				key, ok := named[n]
				if !ok {
					pos := fset.Position(n.Pos())
					key = fmt.Sprintf("%s.%s:%d", f.Name.Name, filepath.Base(pos.Filename), pos.Line)
				}
				out[key] = tags
			}
			return true
		})
	}
	return out
}

// jsonNames returns the JSON names of st's fields.
func jsonNames(st *ast.StructType) map[string]bool {
	tags := map[string]bool{}
	for _, fl := range st.Fields.List {
		if fl.Tag == nil {
			continue
		}
		tag, err := strconv.Unquote(fl.Tag.Value)
		if err != nil {
			continue
		}
		j, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
		if j != "" && j != "-" {
			tags[j] = true
		}
	}
	return tags
}

// TestUpstreamJSONDefinedOnce holds that upstream's admin documents are defined here only:
// neither the broker's REST layer nor client/admin declares a type of the same name or of the
// same JSON (most of one's JSON names being the other's), which is how two copies drift.
func TestUpstreamJSONDefinedOnce(t *testing.T) {
	shared := jsonTypes(t, ".")
	if len(shared) == 0 {
		t.Fatal("no JSON types found here")
	}
	client := jsonTypes(t, "../admin")
	broker := map[string]map[string]bool{}
	for _, dir := range []string{"../../broker", "../../broker/web", "../../broker/policy"} {
		for name, tags := range jsonTypes(t, dir) {
			broker[name] = tags
		}
	}
	for _, pair := range [][2]map[string]map[string]bool{{client, shared}, {broker, shared}, {client, broker}} {
		for name, tags := range pair[0] {
			for other, otags := range pair[1] {
				if same(name, tags, other, otags) {
					t.Errorf("%s and %s are two definitions of one document", name, other)
				}
			}
		}
	}
}

// same reports two types of one name, or of the same JSON: the same names (both exported or
// written in place: a one-field record of the broker's own storage is not an upstream
// document), or most of the larger one's names the other's too.
func same(a string, atags map[string]bool, b string, btags map[string]bool) bool {
	_, ashort, _ := strings.Cut(a, ".")
	_, bshort, _ := strings.Cut(b, ".")
	document := func(short string) bool { return ast.IsExported(short) || strings.Contains(short, ":") }
	common := 0
	for j := range atags {
		if btags[j] {
			common++
		}
	}
	documents := document(ashort) && document(bshort)
	return (ashort == bshort && !strings.Contains(ashort, ":")) || (documents && common == len(atags) && common == len(btags)) ||
		(common >= 2 && 2*common > max(len(atags), len(btags)))
}
