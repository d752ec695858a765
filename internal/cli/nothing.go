package cli

import (
	"fmt"
	"io"

	"github.com/letterbox-dev/letterbox/client/deadletter"
	"github.com/letterbox-dev/letterbox/client/dlqops"
)

// What the commands say when a selection matches nothing: a filter with a typo
// (property.regoin=eu) is valid, selects no letter, and used to read as success ("moved 0 of
// 99000", exit 0, "complete" in the history). The property names it gives that no letter
// carries are named with those that letters do carry; an action that selects nothing exits 3.

// propertyNames watches the property names filters name, nil when they name none.
func propertyNames(filters []dlqops.Filter) *deadletter.PropertyNames {
	var names []string
	for _, f := range filters {
		names = append(names, f.Properties()...)
	}
	return deadletter.NewPropertyNames(names)
}

// warnUnseen writes, on stderr, the property names the filters give that no letter read
// carried; names may be nil.
func warnUnseen(stderr io.Writer, cmd string, names *deadletter.PropertyNames) {
	if w := names.Warning(); w != "" {
		fmt.Fprintf(stderr, "%s: warning: %s\n", cmd, w)
	}
}

// nothingSelected says that what was selected matched no letter and returns ExitNothing.
func nothingSelected(stderr io.Writer, cmd, why string) int {
	fmt.Fprintf(stderr, "%s: nothing selected: %s; nothing done\n", cmd, why)
	return ExitNothing
}
