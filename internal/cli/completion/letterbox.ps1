# PowerShell completion for letterbox. Load it in your profile ($PROFILE) with
#   letterbox completion powershell | Out-String | Invoke-Expression
#
# letterbox itself answers (letterbox __complete), so the completions follow the binary's
# commands and flags, and names of topics, DLQs and subscriptions come from the cluster the
# line names, within LETTERBOX_COMPLETION_TIMEOUT (default 1s).

Register-ArgumentCompleter -Native -CommandName 'letterbox', 'letterbox.exe' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    # The words before the cursor's; the cursor's word, when there is one, is the last element
    # that starts before the cursor.
    $words = @()
    foreach ($element in $commandAst.CommandElements) {
        if ($element.Extent.StartOffset -ge $cursorPosition) { break }
        $words += $element.Extent.Text
    }
    if ($wordToComplete -ne '' -and $words.Count -gt 1) {
        $words = $words[0..($words.Count - 2)]
    }
    $program = $words[0]
    $rest = @()
    if ($words.Count -gt 1) { $rest = $words[1..($words.Count - 1)] }

    # The cursor's word goes behind "=", so that an empty word is still an argument.
    $out = @(& $program __complete @rest "=$wordToComplete" 2>$null)
    if ($out.Count -eq 0) { return }
    $directive = 0
    [void][int]::TryParse($out[-1].TrimStart(':'), [ref]$directive)
    $lines = @()
    if ($out.Count -gt 1) { $lines = $out[0..($out.Count - 2)] }
    # With no candidates PowerShell completes file names itself (directive bits 2 and 4).
    foreach ($line in $lines) {
        if ($line -eq '') { continue }
        $parts = $line -split "`t", 2
        $value = $parts[0]
        $description = $value
        if ($parts.Count -gt 1 -and $parts[1] -ne '') { $description = $parts[1] }
        [System.Management.Automation.CompletionResult]::new($value, $value, 'ParameterValue', $description)
    }
}
