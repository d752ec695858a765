package themes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltinsComplete(t *testing.T) {
	for _, th := range Builtin() {
		if th.Name == NoColorName {
			if th.Palette != (Palette{}) {
				t.Errorf("%s: has colours", th.Name)
			}
			continue
		}
		p := th.Palette
		for role, v := range map[string]string{"primary": p.Primary, "accent": p.Accent, "subtle": p.Subtle,
			"ok": p.OK, "warn": p.Warn, "error": p.Error, "dlq": p.DLQ, "retry": p.Retry, "text": p.Text} {
			if v == "" {
				t.Errorf("%s: no %s colour", th.Name, role)
			}
		}
	}
	for _, want := range []string{"dark", "light", "high-contrast", "colour-blind", "no-color"} {
		if _, ok := Find(want, nil); !ok {
			t.Errorf("built-in %q missing", want)
		}
	}
	if th, ok := Find("colorblind", nil); !ok || th.Name != "colour-blind" {
		t.Errorf("alias colorblind = %v %v", th.Name, ok)
	}
}

func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("solar.toml", "name = \"solarized\"\n[palette]\nprimary = \"#268bd2\"\n")
	write("paper.toml", "dark = false\n[palette]\ndlq = \"1\"\n")
	write("broken.toml", "name = \n")
	write("typo.toml", "[palette]\nprimry = \"#fff\"\n")

	got, err := LoadDir(dir)
	if err == nil || !strings.Contains(err.Error(), "broken.toml") || !strings.Contains(err.Error(), "primry") {
		t.Errorf("err = %v, want broken.toml and the unknown key reported", err)
	}
	if len(got) != 2 {
		t.Fatalf("loaded %d themes, want 2: %+v", len(got), got)
	}
	paper, solar := got[0], got[1]
	if paper.Name != "paper" || paper.Dark || paper.Palette.DLQ != "1" || paper.Palette.Primary != builtin[1].Palette.Primary {
		t.Errorf("paper = %+v, want light-based with dlq 1", paper)
	}
	if solar.Name != "solarized" || !solar.Dark || solar.Palette.Primary != "#268bd2" || solar.Palette.OK != builtin[0].Palette.OK {
		t.Errorf("solarized = %+v", solar)
	}
	if th, ok := Find("solarized", got); !ok || th.Palette.Primary != "#268bd2" {
		t.Errorf("Find(solarized) = %+v %v", th, ok)
	}
	if n := Names(got); n[len(n)-1] != "solarized" {
		t.Errorf("Names = %v", n)
	}
}

func TestLoadDirMissing(t *testing.T) {
	got, err := LoadDir(filepath.Join(t.TempDir(), "nope"))
	if err != nil || got != nil {
		t.Errorf("LoadDir(missing) = %v, %v", got, err)
	}
}

func TestUserDir(t *testing.T) {
	env := map[string]string{"HOME": "/h"}
	get := func(k string) string { return env[k] }
	if d := UserDir(get); d != filepath.Join("/h", ".config", "letterbox", "themes") {
		t.Errorf("UserDir = %s", d)
	}
	env["XDG_CONFIG_HOME"] = "/x"
	if d := UserDir(get); d != filepath.Join("/x", "letterbox", "themes") {
		t.Errorf("UserDir = %s", d)
	}
}
