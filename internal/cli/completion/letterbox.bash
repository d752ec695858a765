# bash completion for letterbox. Load it in ~/.bashrc with
#   source <(letterbox completion bash)
# or save it where bash-completion looks:
#   letterbox completion bash > ~/.local/share/bash-completion/completions/letterbox
#
# letterbox itself answers (letterbox __complete), so the completions follow the binary's
# commands and flags, and names of topics, DLQs and subscriptions come from the cluster the
# line names, within LETTERBOX_COMPLETION_TIMEOUT (default 1s).

_letterbox() {
	# The line up to the cursor, split at blanks: COMP_WORDS would split persistent://a/b/c and
	# --flag=value at the word-break characters.
	local line=${COMP_LINE:0:COMP_POINT}
	local -a words
	read -r -a words <<<"$line"
	local cur=""
	if [[ $line != *[[:space:]] ]] && ((${#words[@]} > 1)); then
		cur=${words[${#words[@]}-1]}
		unset 'words[${#words[@]}-1]'
	fi
	((${#words[@]} > 0)) || return 0

	local out
	out=$("${words[0]}" __complete "${words[@]:1}" "=$cur" 2>/dev/null) || return 0
	local -a lines
	mapfile -t lines <<<"$out"
	local last=${lines[${#lines[@]}-1]}
	unset 'lines[${#lines[@]}-1]'
	local directive=${last#:}
	[[ $directive =~ ^[0-9]+$ ]] || directive=0

	# bash replaces only the part of the word after its last word-break character (= and : by
	# default): take what comes before it off each candidate.
	local strip="" i
	for ((i = ${#cur} - 1; i >= 0; i--)); do
		if [[ $COMP_WORDBREAKS == *"${cur:i:1}"* ]]; then
			strip=${cur:0:i+1}
			break
		fi
	done

	COMPREPLY=()
	local l v
	for l in "${lines[@]}"; do
		v=${l%%$'\t'*}
		[[ -n $v && $v == "$cur"* ]] || continue
		COMPREPLY+=("${v#"$strip"}")
	done
	if ((directive & 1)); then
		compopt -o nospace 2>/dev/null
	fi
	if ((${#COMPREPLY[@]} == 0)); then
		if ((directive & 2)); then
			compopt -o default 2>/dev/null
		elif ((directive & 4)); then
			compopt -o dirnames 2>/dev/null
		fi
	fi
	return 0
}

complete -F _letterbox letterbox
