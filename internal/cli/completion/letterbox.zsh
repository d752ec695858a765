#compdef letterbox
# zsh completion for letterbox. Save it as _letterbox in a directory of $fpath, before
# compinit runs:
#   letterbox completion zsh > "${fpath[1]}/_letterbox"
# or load it in ~/.zshrc, after compinit:
#   source <(letterbox completion zsh)
#
# letterbox itself answers (letterbox __complete), so the completions follow the binary's
# commands and flags, and names of topics, DLQs and subscriptions come from the cluster the
# line names, within LETTERBOX_COMPLETION_TIMEOUT (default 1s).

_letterbox() {
	local out directive line value desc
	local -a lines cands
	out=$("${words[1]}" __complete "${(@)words[2,CURRENT-1]}" "=${words[CURRENT]}" 2>/dev/null) || return 1
	lines=("${(@f)out}")
	directive=${lines[-1]#:}
	[[ $directive == <-> ]] || directive=0
	lines=("${(@)lines[1,-2]}")
	for line in "${lines[@]}"; do
		[[ -n $line ]] || continue
		value=${line%%$'\t'*}
		desc=
		[[ $line == *$'\t'* ]] && desc=${line#*$'\t'}
		# _describe separates a value from its description with ":".
		cands+=("${value//:/\\:}${desc:+:$desc}")
	done
	if (( ${#cands} == 0 )); then
		if (( directive & 2 )); then
			_files
		elif (( directive & 4 )); then
			_files -/
		else
			return 1
		fi
		return
	fi
	if (( directive & 1 )); then
		_describe -t letterbox letterbox cands -S ''
	else
		_describe -t letterbox letterbox cands
	fi
}

if [[ $funcstack[1] == _letterbox ]]; then
	# Autoloaded from $fpath: this file is the function's body.
	_letterbox "$@"
else
	compdef _letterbox letterbox
fi
