package tui

import (
	"strings"
	"testing"
)

// TestHeaderShowsBothURLs (defect 17 of issue 31): when letterbox runs the broker, the header
// shows where applications connect beside the admin URL; where the line is too narrow for the
// breadcrumb, the service URL goes first.
func TestHeaderShowsBothURLs(t *testing.T) {
	header := func(w int, line string) string {
		h := newHarness(t, w, 24, "dark")
		h.app.serviceInHeader = true
		if line != "" {
			h.command(line)
		}
		return strings.SplitN(h.plain(), "\n", 2)[0]
	}
	if got := header(80, ""); !strings.Contains(got, "pulsar://127.0.0.1:6650 http://127.0.0.1:8080 ● connected") {
		t.Errorf("the topics screen's header at 80 columns: %q", got)
	}
	if got := header(160, "dlq public/demo/orders-billing-DLQ"); !strings.Contains(got, "pulsar://127.0.0.1:6650 http://127.0.0.1:8080 ● connected") {
		t.Errorf("the dead letters' header at 160 columns: %q", got)
	}
	if got := header(40, "dlq public/demo/orders-billing-DLQ"); strings.Contains(got, "pulsar://") || len([]rune(got)) > 40 {
		t.Errorf("the dead letters' header at 40 columns: %q", got)
	}
}
