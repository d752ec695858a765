package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/letterbox-dev/letterbox/themes"
	"github.com/letterbox-dev/letterbox/tui/common"
	"github.com/letterbox-dev/letterbox/tui/data"
	"github.com/letterbox-dev/letterbox/tui/keymap"
)

// Options configure Run. Only Source is required.
type Options struct {
	// Source is where the data comes from: data.NewAdmin(...) for a cluster or the embedded
	// broker (tests use a fake, tui/data/datatest).
	Source data.Source
	// Theme is a theme name (built-in or user); "" picks the default, or no-color when NO_COLOR
	// is set. An unknown name is an error, reported before the screen is taken.
	Theme string
	// ThemesDir holds user themes; "" means $XDG_CONFIG_HOME/letterbox/themes.
	ThemesDir string
	// Namespace to open ("tenant/ns"); "" lists every namespace.
	Namespace string
	// In and Out are the terminal; nil means stdin and stdout.
	In  io.Reader
	Out io.Writer
	// Getenv reads the environment (NO_COLOR, XDG_CONFIG_HOME); nil means os.Getenv.
	Getenv func(string) string
	// Refresh is the live-refresh interval (default 2 s); Timeout bounds each data call
	// (default 10 s).
	Refresh, Timeout time.Duration
	// Clock is the TUI's time; nil means the wall clock.
	Clock common.Clock
	// ExportDir is where message exports go; "" means the working directory.
	ExportDir string
	// DataDir is the embedded broker's data directory, when letterbox runs one: exports are
	// never written inside it.
	DataDir string
	// Warnf receives problems worth logging that do not stop the TUI (a broken user theme).
	// While the TUI owns the terminal nothing may be printed; pass a logger. nil drops them.
	Warnf func(format string, args ...any)
	// ReadOnly, when set, turns every action off (discard, purge, resend, replay, produce,
	// subscription and retention changes), saying this as the reason: "read-only (--readonly)"
	// holds for the session, "read-only (context prod)" until :context leaves prod.
	ReadOnly string
	// ReadOnlyFlag marks ReadOnly as the session's own (--readonly), kept across contexts.
	ReadOnlyFlag bool
	// ServiceInHeader puts the service URL (pulsar://) beside the admin URL in the header: when
	// letterbox runs the broker, it is where applications connect, on a free port at times.
	ServiceInHeader bool
	// Others, when letterbox runs the broker itself, says who else uses it (not the TUI, nor
	// the demo's workload): q asks before quitting, which stops the broker, while anyone does.
	Others func() Others
	// Contexts are the named clusters of the configuration file: the header shows the current
	// one's name in its colour, and ":context NAME" switches to another (see Contexts). When
	// the TUI switches away from Source it closes it (if Source has a Close method), so the
	// caller's own Close of Source must be safe to call twice.
	Contexts Contexts
}

// Others are the embedded broker's clients besides letterbox itself: its open binary-protocol
// connections, and the connections that made an admin request in the last AdminWithin.
type Others struct {
	Connections  int
	AdminClients int
	AdminWithin  time.Duration
}

// Any reports whether anyone else uses the broker.
func (o Others) Any() bool { return o.Connections > 0 || o.AdminClients > 0 }

// String names them: "1 binary-protocol connection and 2 admin clients (requests in the last
// 30s)".
func (o Others) String() string {
	var parts []string
	if o.Connections > 0 {
		parts = append(parts, common.Plural(o.Connections, "binary-protocol connection"))
	}
	if o.AdminClients > 0 {
		parts = append(parts, common.Plural(o.AdminClients, "admin client")+" (requests in the last "+o.AdminWithin.String()+")")
	}
	return strings.Join(parts, " and ")
}

// New builds the app model from opts without running it (tests and embedding).
func New(ctx context.Context, opts Options) (*App, error) {
	if opts.Source == nil {
		return nil, errors.New("tui: no data source")
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	dir := opts.ThemesDir
	if dir == "" {
		dir = themes.UserDir(getenv)
	}
	user, err := themes.LoadDir(dir)
	if err != nil && opts.Warnf != nil {
		opts.Warnf("user themes: %v", err)
	}
	name := opts.Theme
	if name == "" {
		name = themes.Default
		if getenv("NO_COLOR") != "" {
			name = themes.NoColorName
		}
	}
	theme, ok := themes.Find(name, user)
	if !ok {
		return nil, fmt.Errorf("unknown theme %q (themes: %v)", name, themes.Names(user))
	}
	if opts.Refresh <= 0 {
		opts.Refresh = 2 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	clock := opts.Clock
	if clock == nil {
		clock = common.RealClock{}
	}
	c := &common.Common{
		Ctx: ctx, Styles: common.NewStyles(theme), Keys: keymap.Default(), Clock: clock,
		Source: opts.Source, Timeout: opts.Timeout, UserThemes: user, ExportDir: opts.ExportDir, DataDir: opts.DataDir,
		ReadOnly: opts.ReadOnly, Getenv: getenv,
	}
	app := NewApp(c, opts.Namespace, opts.Refresh)
	if opts.ReadOnlyFlag {
		app.readOnlyFlag = opts.ReadOnly
	}
	app.others, app.serviceInHeader = opts.Others, opts.ServiceInHeader
	if err := app.setContexts(opts.Contexts, opts.Theme == "" && getenv("NO_COLOR") == ""); err != nil {
		return nil, err
	}
	return app, nil
}

// frameRate is how many frames a second the TUI draws at most.
const frameRate = 30

// Run runs the TUI until the user quits or ctx is cancelled (which is not an error).
func Run(ctx context.Context, opts Options) error {
	app, err := New(ctx, opts)
	if err != nil {
		return err
	}
	// The renderer wakes the process for every frame, whether or not the screen changed: at
	// Bubble Tea's default 60 frames a second that was 40 % of an idle TUI's CPU (2.3 % of a
	// core against 1.4 % at 30). At 30 a keystroke is on screen within 33 ms.
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithFPS(frameRate)}
	if opts.In != nil {
		popts = append(popts, tea.WithInput(opts.In))
	}
	if opts.Out != nil {
		popts = append(popts, tea.WithOutput(opts.Out))
	}
	if opts.Getenv != nil {
		popts = append(popts, tea.WithEnvironment(environ(opts.Getenv)))
	}
	defer app.closeSources(opts.Source)
	_, err = tea.NewProgram(app, popts...).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// environ rebuilds the variables the renderer looks at from getenv.
func environ(getenv func(string) string) []string {
	var env []string
	for _, k := range []string{"TERM", "COLORTERM", "NO_COLOR", "CLICOLOR_FORCE", "TERM_PROGRAM"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}
