package main

// Checks over the source tree itself: what the house rules say of comments and package docs,
// which no compiler or linter checks.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// sourceFile is one parsed non-generated .go file of the module.
type sourceFile struct {
	path string // slash-separated, relative to the module root
	fset *token.FileSet
	file *ast.File
}

// sourceTree parses every .go file of the module (tests too; generated files and testdata
// left out) and lists the base names of all its files, of any kind.
func sourceTree(t *testing.T) (files []sourceFile, names map[string]bool) {
	t.Helper()
	names = make(map[string]bool)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		names[d.Name()] = true
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if !ast.IsGenerated(f) {
			files = append(files, sourceFile{filepath.ToSlash(path), fset, f})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, names
}

// fileName matches what reads as a file's name in prose: a Go file or a Markdown document,
// maybe with a path or a glob.
var fileName = regexp.MustCompile(`[A-Za-z0-9_*.\-/]*[A-Za-z0-9_*\-]\.(?:go|md)\b`)

// TestCommentsNameExistingFiles: a comment that sends the reader to a file sends them to one
// that is here. (A glob must match one file at least.)
func TestCommentsNameExistingFiles(t *testing.T) {
	files, names := sourceTree(t)
	exists := func(ref string) bool {
		base := ref[strings.LastIndex(ref, "/")+1:]
		if !strings.Contains(base, "*") {
			return names[base]
		}
		for n := range names {
			if ok, _ := filepath.Match(base, n); ok {
				return true
			}
		}
		return false
	}
	for _, sf := range files {
		for _, cg := range sf.file.Comments {
			for _, c := range cg.List {
				for _, ref := range fileName.FindAllString(c.Text, -1) {
					if !exists(ref) {
						t.Errorf("%s:%d: a comment names %s, which is not in the repository",
							sf.path, sf.fset.Position(c.Pos()).Line, ref)
					}
				}
			}
		}
	}
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range append(docs, "README.md") {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, ref := range fileName.FindAllString(line, -1) {
				if !exists(ref) {
					t.Errorf("%s:%d: names %s, which is not in the repository", doc, i+1, ref)
				}
			}
		}
	}
}

// TestPackageDocsListNoFiles: a package doc says what the package owns and its entry points;
// a list of its files goes stale with every file added, split or renamed. One file may be
// named (where the one thing to read first is), not two.
func TestPackageDocsListNoFiles(t *testing.T) {
	files, _ := sourceTree(t)
	for _, sf := range files {
		if sf.file.Doc == nil || strings.HasSuffix(sf.path, "_test.go") {
			continue
		}
		var named []string
		for _, ref := range fileName.FindAllString(sf.file.Doc.Text(), -1) {
			if strings.HasSuffix(ref, ".go") && !slices.Contains(named, ref) {
				named = append(named, ref)
			}
		}
		if len(named) > 1 {
			t.Errorf("%s: the package doc lists files (%s): say what the package owns and its entry points instead",
				sf.path, strings.Join(named, ", "))
		}
	}
}

// maxFuncLines is the most lines a function may take: past it, the steps that have names of
// their own hide in its body.
const maxFuncLines = 120

// longFuncs are the functions allowed past maxFuncLines: declarative tables (a list of routes
// is read entry by entry, not as steps). None is today.
var longFuncs = map[string]bool{}

// TestNoLongFunctions: no hand-written non-test function is longer than maxFuncLines, but for
// longFuncs.
func TestNoLongFunctions(t *testing.T) {
	files, _ := sourceTree(t)
	seen := make(map[string]bool)
	for _, sf := range files {
		if strings.HasSuffix(sf.path, "_test.go") {
			continue
		}
		for _, d := range sf.file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := fn.Name.Name
			if fn.Recv != nil && len(fn.Recv.List) > 0 {
				name = recvName(fn.Recv.List[0].Type) + "." + name
			}
			key := sf.path + ":" + name
			lines := sf.fset.Position(fn.End()).Line - sf.fset.Position(fn.Pos()).Line + 1
			if lines <= maxFuncLines {
				continue
			}
			seen[key] = true
			if !longFuncs[key] {
				t.Errorf("%s: %s is %d lines, over %d: split it where its steps have names of their own",
					sf.path, name, lines, maxFuncLines)
			}
		}
	}
	for key := range longFuncs {
		if !seen[key] {
			t.Errorf("%s is allowed to be long but is not (or is gone): take it off longFuncs", key)
		}
	}
}

// recvName is the name of a method's receiver type, without its pointer or type parameters.
func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}
