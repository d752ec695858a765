package themes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// UserDir is where user themes live: $XDG_CONFIG_HOME/letterbox/themes, or
// ~/.config/letterbox/themes when XDG_CONFIG_HOME is unset. getenv is os.Getenv in the program
// and a map lookup in tests.
func UserDir(getenv func(string) string) string {
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "letterbox", "themes")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "letterbox", "themes")
	}
	return ""
}

// file is a user theme file. Every palette key is optional: missing ones come from the theme
// named by base (default "dark", or "light" when dark = false).
//
//	name = "solarized"
//	base = "dark"
//	[palette]
//	primary = "#268bd2"
//	dlq = "#dc322f"
type file struct {
	Name    string  `toml:"name"`
	Base    string  `toml:"base"`
	Dark    *bool   `toml:"dark"`
	Palette Palette `toml:"palette"`
}

// LoadDir reads every *.toml in dir as a theme, in name order. A missing directory is no
// error; a broken file is skipped and reported in the returned error (the others still load),
// so one bad file never keeps the TUI from starting.
func LoadDir(dir string) ([]Theme, error) {
	if dir == "" {
		return nil, nil
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.toml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []Theme
	var errs []error
	for _, p := range paths {
		t, err := LoadFile(p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}

// LoadFile reads one theme file. The theme's name defaults to the file name without .toml.
func LoadFile(path string) (Theme, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Theme{}, err
	}
	var f file
	md, err := toml.Decode(string(b), &f)
	if err != nil {
		return Theme{}, fmt.Errorf("theme %s: %w", filepath.Base(path), err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return Theme{}, fmt.Errorf("theme %s: unknown key %q", filepath.Base(path), und[0].String())
	}
	name := strings.TrimSpace(f.Name)
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), ".toml")
	}
	baseName := f.Base
	if baseName == "" {
		baseName = Default
		if f.Dark != nil && !*f.Dark {
			baseName = "light"
		}
	}
	base, ok := Find(baseName, nil)
	if !ok {
		return Theme{}, fmt.Errorf("theme %s: unknown base theme %q", filepath.Base(path), baseName)
	}
	t := Theme{Name: name, Dark: base.Dark, Palette: f.Palette.merge(base.Palette)}
	if f.Dark != nil {
		t.Dark = *f.Dark
	}
	return t, nil
}
