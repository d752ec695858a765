package main

// The presentation layers (the command line and the TUI) reach dead-letter operations through
// client/dlqops only: an engine imported beside it is where a second way of preparing an
// action starts, and the two drift (issue 33 found the command line and the TUI resolving
// names, choosing subscriptions and building replay options each their own way).

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// presentation are the trees that show dead-letter operations and must not run them.
var presentation = []string{"internal/cli", "tui"}

// engines are the packages behind client/dlqops.
var engines = []string{
	"github.com/letterbox-dev/letterbox/client/replay",
	"github.com/letterbox-dev/letterbox/client/triage",
}

// TestPresentationImportsNoEngine: no file under internal/cli or tui, tests included, imports
// client/replay or client/triage.
func TestPresentationImportsNoEngine(t *testing.T) {
	for _, root := range presentation {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			for _, imp := range f.Imports {
				p, err := strconv.Unquote(imp.Path.Value)
				if err != nil {
					return err
				}
				for _, e := range engines {
					if p == e {
						t.Errorf("%s imports %s: reach it through client/dlqops", filepath.ToSlash(path), p)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
