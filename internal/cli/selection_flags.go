package cli

import (
	"errors"
	"strings"

	"github.com/letterbox-dev/letterbox/client"
	"github.com/letterbox-dev/letterbox/client/dlqops"
)

// The selection flags (--filter, --ids) as flag values that refuse, while the command line is
// parsed and before anything connects, a value that selects nothing the user wrote: a blank
// expression, an empty list of ids or an empty item in one. Taken for "no selection", each of
// them once made an action take every letter.

// filterList is --filter: repeatable, the expressions ANDed.
type filterList []string

func (f *filterList) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(*f, " ")
}

func (f *filterList) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("a blank expression selects nothing you wrote: write one, or leave --filter out")
	}
	*f = append(*f, v)
	return nil
}

// idList is --ids: message ids, comma-separated (dlqops.ParseIDs), repeatable.
type idList struct {
	text []string
	ids  []client.MessageID
}

func (l *idList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(l.text, ",")
}

func (l *idList) Set(v string) error {
	ids, err := dlqops.ParseIDs(v)
	if err != nil {
		// The flag package names the flag and the value already.
		_, msg, _ := strings.Cut(err.Error(), "--ids: ")
		return errors.New(msg)
	}
	l.text = append(l.text, v)
	l.ids = append(l.ids, ids...)
	return nil
}
