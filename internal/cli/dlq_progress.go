package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/letterbox-dev/letterbox/client/dlqops"
)

// scanBar draws a scan's progress on one line of a terminal, redrawn in place, as replay's
// drawBar does: entries read of the topic's total, letters a second and the time left. Its
// draw method is a dlqops.ScanOptions.Progress callback; the scan calls it from one goroutine.
type scanBar struct {
	w io.Writer
}

func (b scanBar) draw(p dlqops.ScanProgress) {
	const width = 30
	line := fmt.Sprintf("%d entries", p.Entries)
	if p.TotalEntries > 0 {
		done := min(int(p.Fraction*width), width)
		line = fmt.Sprintf("[%s%s] %3d%% %d/%d entries", strings.Repeat("#", done), strings.Repeat(".", width-done),
			int(p.Fraction*100), p.Entries, p.TotalEntries)
	}
	line += fmt.Sprintf(", %d letters, %.0f letters/s", p.Read, p.Rate)
	if left := p.Left.Round(time.Second); left > 0 && !p.Done {
		line += ", " + left.String() + " left"
	}
	fmt.Fprintf(b.w, "\r\033[K%s", line)
	if p.Done {
		// The scan's last report: what follows starts on a line of its own.
		io.WriteString(b.w, "\n")
	}
}

// scanProgress is the progress callback for a scan whose diagnostics go to stderr: a bar on
// a terminal, nothing otherwise (a log or a pipe would keep every redraw).
func scanProgress(stderr io.Writer) func(dlqops.ScanProgress) {
	if !isTerminal(stderr) {
		return nil
	}
	return scanBar{w: stderr}.draw
}
