package messages

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExportPath(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	wd, _ := os.Getwd()
	for _, c := range []struct {
		dir, path, want, err string
	}{
		{dir, "a.jsonl", filepath.Join(dir, "a.jsonl"), ""},
		{"", "a.jsonl", filepath.Join(wd, "a.jsonl"), ""},
		{dir, filepath.Join(dir, "sub", "..", "b.jsonl"), filepath.Join(dir, "b.jsonl"), ""},
		{data, "a.jsonl", "", "inside the embedded broker's data directory"},
		{dir, filepath.Join(data, "ledgers", "x.jsonl"), "", "inside the embedded broker's data directory"},
		{dir, filepath.Join(data, "..", filepath.Base(dir), "c.jsonl"), filepath.Join(dir, "c.jsonl"), ""},
	} {
		got, err := exportPath(c.dir, data, c.path)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("exportPath(%q, %q) = %q, %v; want an error %q", c.dir, c.path, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("exportPath(%q, %q) = %q, %v; want %q", c.dir, c.path, got, err, c.want)
		}
	}
}
