package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
	"github.com/letterbox-dev/letterbox/client/termtext"
)

// What "letterbox dlq resend" sends: the letter read back, its destination, the edit the
// flags and the editor make, and how it is shown before the question.

// optString is a string flag that knows whether it was given: --key "" sends no key.
type optString struct {
	v   string
	set bool
}

func (o *optString) String() string     { return o.v }
func (o *optString) Set(v string) error { o.v, o.set = v, true; return nil }

// propertyList is --property k=v, repeatable.
type propertyList []string

func (p *propertyList) String() string { return strings.Join(*p, " ") }

func (p *propertyList) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
		return fmt.Errorf("%q: want k=v", v)
	}
	*p = append(*p, v)
	return nil
}

// check refuses a property both set and unset.
func (p propertyList) check(unset []string) error {
	for _, kv := range p {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(unset, k) {
			return fmt.Errorf("--property %s and --unset-property %s contradict each other", kv, k)
		}
	}
	return nil
}

// apply sets and removes properties of props.
func (p propertyList) apply(props map[string]string, unset []string) {
	for _, kv := range p {
		k, v, _ := strings.Cut(kv, "=")
		props[k] = v
	}
	for _, k := range unset {
		delete(props, k)
	}
}

// startEdit is the letter as a resend starts from: its payload, key and properties without
// the bookkeeping.
func startEdit(m *client.Message) dlqops.Edit {
	return dlqops.StartEdit(m.Payload, m.Key, m.Properties)
}

// edits reports whether ed changes anything of the letter m.
func edits(m *client.Message, ed dlqops.Edit) bool { return ed.Changes(startEdit(m)) }

// editorCommand is $VISUAL, else $EDITOR ("" when neither is set).
func editorCommand() string {
	if v := strings.TrimSpace(os.Getenv("VISUAL")); v != "" {
		return v
	}
	return strings.TrimSpace(os.Getenv("EDITOR"))
}

// editPayload opens payload in the editor (a command line: "code --wait" works) on the
// terminal and returns the file as it was saved. The editor draws on stderr, the terminal,
// so that stdout stays the command's output.
func editPayload(ctx context.Context, editor string, payload []byte, in stdin, stderr io.Writer) ([]byte, error) {
	ext := ".txt"
	if json.Valid(payload) {
		ext = ".json"
	}
	f, err := os.CreateTemp("", "letterbox-resend-*"+ext)
	if err != nil {
		return nil, fmt.Errorf("--edit: %w", err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(payload)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("--edit: %w", err)
	}
	args := strings.Fields(editor)
	c := exec.CommandContext(ctx, args[0], append(args[1:], f.Name())...)
	c.Stdout, c.Stderr = stderr, stderr
	if tty, ok := in.r.(*os.File); ok {
		// The terminal itself; any other reader would be drained into the editor by a
		// copying goroutine, the answer to the question that follows with it.
		c.Stdin = tty
	}
	if err := c.Run(); err != nil {
		return nil, fmt.Errorf("--edit: %s: %w", editor, err)
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		return nil, fmt.Errorf("--edit: %w", err)
	}
	// Editors end the last line of a file with a newline; a payload that had none gets none.
	if !bytes.HasSuffix(payload, []byte("\n")) {
		b = bytes.TrimSuffix(b, []byte("\n"))
	}
	return b, nil
}

// showResend writes what a resend will send, for the person about to confirm it.
func showResend(w io.Writer, m *client.Message, ed dlqops.Edit, t *dlqops.Target, dest string) {
	props := dlqops.EditedProperties(m, ed)
	var kvs []string
	for _, k := range slices.Sorted(maps.Keys(props)) {
		kvs = append(kvs, termtext.Line(k)+"="+termtext.Line(props[k]))
	}
	key := termtext.Line(ed.Key)
	switch {
	case ed.Key == "" && m.Key == "":
		key = "(none)"
	case ed.Key != m.Key:
		key = fmt.Sprintf("%q (was %q)", ed.Key, m.Key)
	}
	fmt.Fprintf(w, "resend %s of %s via %s\n", positionOf(m.ID), shortTopic(t.Topic), termtext.Line(t.Sub))
	fmt.Fprintf(w, "  to          %s\n", termtext.Line(dest))
	fmt.Fprintf(w, "  key         %s\n", key)
	fmt.Fprintf(w, "  properties  %s\n", strings.Join(kvs, ", "))
	fmt.Fprintf(w, "  payload     %s\n", payloadLine(ed.Payload, m.Payload))
}

// payloadLine is the payload's size and first line (up to 72 characters); "binary" when it
// is not text.
func payloadLine(p, was []byte) string {
	s := fmt.Sprintf("%d bytes", len(p))
	if !bytes.Equal(p, was) {
		s += fmt.Sprintf(" (was %d bytes)", len(was))
	}
	if !utf8.Valid(p) {
		return s + ", binary"
	}
	first, _, _ := strings.Cut(string(p), "\n")
	if r := []rune(first); len(r) > 72 {
		first = string(r[:72]) + "…"
	}
	if first == "" {
		return s
	}
	return s + ": " + termtext.Line(first)
}
