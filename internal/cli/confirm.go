package cli

import (
	"fmt"
	"io"
	"strings"
)

// Confirmation of the dlq actions (docs/design.md "Command line": a refusal to act without
// confirmation is exit 2). An action asks on stderr and reads the answer from stdin when a
// person is at a terminal; --yes answers for them, as a script must; without either it does
// nothing. What may not be undone at scale — more than bigAction letters, or a whole backlog —
// wants the DLQ's short name typed rather than a "y" given by reflex.

// bigAction is how many letters an action may take with a plain "y".
const bigAction = 100

// stdin is the command's standard input and whether a person types at it.
type stdin struct {
	r        io.Reader
	terminal bool
}

// question is what an action asks before it acts.
type question struct {
	cmd  string // "letterbox dlq discard", for messages
	text string // "discard 3 letters of orders-billing-DLQ via billing-keep?"
	// name, when set, must be typed instead of y: the DLQ's short name.
	name string
}

// confirm settles whether the action may go on: at once with yes (--yes); otherwise by asking
// on stderr when stdin is a terminal. ok false ends the command with code: ExitOK when the
// person answered anything but the answer asked for (nothing was done, which is no failure),
// ExitUsage without a terminal to ask on. Both are said on stderr.
func (in stdin) confirm(q question, yes bool, stderr io.Writer) (ok bool, code int) {
	if yes {
		return true, ExitOK
	}
	if !in.terminal {
		fmt.Fprintf(stderr, "%s: not confirmed: stdin is not a terminal to ask on; add --yes to act without a question (%s)\n",
			q.cmd, strings.TrimSuffix(q.text, "?"))
		return false, ExitUsage
	}
	if q.name != "" {
		fmt.Fprintf(stderr, "%s\nType %s to confirm: ", q.text, q.name)
	} else {
		fmt.Fprintf(stderr, "%s [y/N] ", q.text)
	}
	answer, err := readLine(in.r)
	if err != nil && answer == "" {
		io.WriteString(stderr, "\n") // end of input: the prompt's line is left open
	}
	answer = strings.TrimSpace(answer)
	if q.name != "" {
		ok = answer == q.name
	} else {
		ok = strings.EqualFold(answer, "y") || strings.EqualFold(answer, "yes")
	}
	if !ok {
		fmt.Fprintf(stderr, "%s: not confirmed; nothing done\n", q.cmd)
		return false, ExitOK
	}
	return true, ExitOK
}

// readLine reads up to a newline one byte at a time: a buffered reader would swallow what
// follows the answer, which belongs to whoever reads stdin next.
func readLine(r io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		n, err := r.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				return b.String(), nil
			}
			b.WriteByte(buf[0])
		}
		if err != nil {
			return b.String(), err
		}
	}
}

// localName is a topic's short name, the part after its namespace (orders-billing-DLQ): what
// an action on a whole DLQ wants typed.
func localName(topic string) string {
	return topic[strings.LastIndex(topic, "/")+1:]
}
