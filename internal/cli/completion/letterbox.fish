# fish completion for letterbox. Save it where fish looks:
#   letterbox completion fish > ~/.config/fish/completions/letterbox.fish
#
# letterbox itself answers (letterbox __complete), so the completions follow the binary's
# commands and flags, and names of topics, DLQs and subscriptions come from the cluster the
# line names, within LETTERBOX_COMPLETION_TIMEOUT (default 1s).

function __letterbox_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    set -l out ($words[1] __complete $words[2..-1] "=$cur" 2>/dev/null)
    or return
    test (count $out) -gt 0
    or return
    set -l directive (string replace -r '^:' '' -- $out[-1])
    set -e out[-1]
    if test (count $out) -eq 0
        # Directive bits: 1 no space after, 2 file names, 4 directory names.
        switch $directive
            case 2 3
                __fish_complete_path $cur
            case 4 5
                __fish_complete_directories $cur
        end
        return
    end
    printf '%s\n' $out
end

complete -c letterbox -f -a '(__letterbox_complete)'
