package cli

import (
	"embed"
	"fmt"
	"io"
)

// `letterbox completion SHELL` prints the script that hooks letterbox into the shell's
// completion. Each script only asks letterbox itself (`letterbox __complete`, complete.go), so
// the candidates are the binary's own commands and flags and never drift from them.

//go:embed completion/letterbox.bash completion/letterbox.zsh completion/letterbox.fish completion/letterbox.ps1
var completionScripts embed.FS

// shell is a shell completion supports, with its script and how to install it.
type shell struct {
	name, script, install string
}

var shells = []shell{
	{"bash", "completion/letterbox.bash", `source <(letterbox completion bash)     # in ~/.bashrc; or, with bash-completion:
        letterbox completion bash > ~/.local/share/bash-completion/completions/letterbox`},
	{"zsh", "completion/letterbox.zsh", `letterbox completion zsh > "${fpath[1]}/_letterbox"   # then start a new shell; or,
        source <(letterbox completion zsh)                   # in ~/.zshrc after compinit`},
	{"fish", "completion/letterbox.fish", `letterbox completion fish > ~/.config/fish/completions/letterbox.fish`},
	{"powershell", "completion/letterbox.ps1", `letterbox completion powershell | Out-String | Invoke-Expression   # in $PROFILE`},
}

func shellNames() []string {
	names := make([]string, len(shells))
	for i, s := range shells {
		names[i] = s.name
	}
	return names
}

const completionUsageText = `Usage: letterbox completion bash|zsh|fish|powershell

Prints the shell's completion script for letterbox: commands, subcommands and flags, contexts
from the configuration file, and the cluster's topics, DLQs, namespaces and subscriptions,
asked from the cluster the line's flags (or --context) name. A cluster that has not answered
within ` + completionTimeoutVar + ` (a duration, default 1s; 0 asks nothing) gets no
completion, never a wait.

Installing:
`

func completionUsage(w io.Writer) {
	io.WriteString(w, completionUsageText)
	for _, s := range shells {
		fmt.Fprintf(w, "  %s:\n        %s\n", s.name, s.install)
	}
}

// runCompletion is `letterbox completion SHELL`.
func runCompletion(args []string, stdout, stderr io.Writer) int {
	const name = "letterbox completion"
	if len(args) == 0 {
		return usageError(stderr, name, fmt.Errorf("want a shell: bash, zsh, fish or powershell"))
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		completionUsage(stdout)
		return ExitOK
	}
	if len(args) > 1 {
		return usageError(stderr, name, fmt.Errorf("unexpected argument %q", args[1]))
	}
	for _, s := range shells {
		if s.name == args[0] {
			script, err := completionScripts.ReadFile(s.script)
			if err != nil {
				fmt.Fprintf(stderr, "%s: %v\n", name, err)
				return ExitFailure
			}
			stdout.Write(script)
			return ExitOK
		}
	}
	return usageError(stderr, name, fmt.Errorf("unknown shell %q: want bash, zsh, fish or powershell", args[0]))
}
