//go:build linux

package storage

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFileNoSpaceOnTmpfs fills a real, small file system. Mounting one needs root: run as
// another user, the test runs itself again through `sudo -n` (which asks nothing). Where
// neither works it skips (TestFileNoSpace covers the same through FaultFS), except in CI (CI
// set), where a missing prerequisite fails the run rather than letting it pass without the
// test.
func TestFileNoSpaceOnTmpfs(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		runAsRoot(t)
		return
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=4m"); err != nil {
		missingPrerequisite(t, fmt.Sprintf("cannot mount a tmpfs: %v", err))
	}
	t.Cleanup(func() { syscall.Unmount(mnt, syscall.MNT_DETACH) })

	logs := &logBuffer{}
	e := &fileEnv{t: t, dir: filepath.Join(mnt, "data"), logs: logs}
	e.opts.Logger = testLoggerTo(logs)
	e.open()
	defer func() {
		if e.s != nil {
			e.s.Close()
		}
	}()
	l := e.log(testTopic)
	data := make([]byte, 4096)
	for i := range data {
		data[i] = byte(i)
	}
	ok := 0
	for range 10 {
		mustAppend(t, l, Meta{SequenceID: uint64(ok)}, data)
		ok++
	}
	// Fill what is left.
	filler := filepath.Join(mnt, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()

	var failed error
	for range 64 {
		if _, err := appendSync(t, l, Meta{SequenceID: uint64(ok)}, data); err != nil {
			failed = err
			break
		}
		ok++
	}
	if !errors.Is(failed, ErrNoSpace) {
		t.Fatalf("appends on a full tmpfs: %v", failed)
	}
	if got := readAll(t, l); len(got) != ok {
		t.Errorf("reads on a full disk: %d entries, %d appended", len(got), ok)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, Meta{SequenceID: uint64(ok)}, data)
	ok++

	e.reopen()
	got := readAll(t, e.log(testTopic))
	if len(got) != ok {
		t.Fatalf("after restart: %d entries, %d appended", len(got), ok)
	}
	for i, en := range got {
		if en.Meta.SequenceID != uint64(i) || len(en.Data) != len(data) {
			t.Fatalf("entry %d: sequence %d, %d bytes", i, en.Meta.SequenceID, len(en.Data))
		}
	}
	if s := logs.String(); strings.Contains(s, "cut a torn") || strings.Contains(s, "corrupt") {
		t.Errorf("recovery found damage after a full disk:\n%s", s)
	}
}

// dropCaches empties the page cache (root only).
func dropCaches() error {
	syscall.Sync()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0)
}

// runAsRoot runs the current test again, alone, in this test binary under `sudo -n`, and fails
// with its output if it fails there.
func runAsRoot(t *testing.T) {
	t.Helper()
	if os.Getenv("LETTERBOX_TEST_AS_ROOT") != "" {
		t.Fatal("running as root through sudo, and still not root")
	}
	sudo, err := exec.LookPath("sudo")
	if err == nil {
		err = exec.Command(sudo, "-n", "true").Run()
	}
	if err != nil {
		missingPrerequisite(t, fmt.Sprintf("needs root to mount a tmpfs, and sudo -n cannot give it (%v)", err))
	}
	cmd := exec.Command(sudo, "-n", "env", "LETTERBOX_TEST_AS_ROOT=1", os.Args[0],
		"-test.run", "^"+t.Name()+"$", "-test.count", "1", "-test.timeout", "2m", "-test.v")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s as root: %v\n%s", t.Name(), err, out)
	}
	t.Logf("%s passed as root", t.Name())
}

// missingPrerequisite skips the test for want of reason, or fails it in CI.
func missingPrerequisite(t *testing.T, reason string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s; CI is set, so a missing prerequisite fails the run", reason)
	}
	t.Skip(reason)
}
