#!/bin/bash
# cli_shell.sh HALFWAY MANPAGE VERSION: the CLI's conventions for shells and man: the completion
# scripts complete subcommands and each subcommand's options, usage lines name the program, and
# the man page written at build time is valid roff with the CLI's help in it.
set -euo pipefail
halfway=$1 manpage=$2 version=$3

fail() {
  echo "cli_shell.sh: $*" >&2
  exit 1
}

# complete WORD...: what the bash completion offers for the last word of `halfway WORD...`.
script=$("$halfway" completion bash)
complete_words() {
  bash -c "$script"'
    COMP_WORDS=(halfway "$@")
    COMP_CWORD=$#
    _halfway
    echo "${COMPREPLY[*]}"' complete "$@"
}
[[ $(complete_words ru) == "run" ]] || fail "'halfway ru' completes to '$(complete_words ru)'"
[[ $(complete_words d) == "demo devices diff" ]] || fail "'halfway d': '$(complete_words d)'"
[[ $(complete_words --ver) == "--verbose --version" ]] || fail "'halfway --ver': '$(complete_words --ver)'"
[[ $(complete_words diff --max) == "--max-unchecked --max-undecided" ]] ||
  fail "'halfway diff --max': '$(complete_words diff --max)'"
[[ $(complete_words run --max) == "" ]] || fail "'halfway run --max' offers diff's option"
[[ $(complete_words -v plot --o) == "--output" ]] || fail "'halfway -v plot --o'"
[[ $(complete_words run kernel.hk) == "" ]] || fail "a file name after run was completed as a word"
bash -c "$script"'; complete -p halfway' | grep -q -- '-F _halfway halfway' || fail "no complete -F"

zsh_script=$("$halfway" completion zsh)
[[ $(head -n1 <<<"$zsh_script") == "#compdef halfway" ]] || fail "zsh script does not start with #compdef"
[[ $zsh_script == *"bashcompinit"*"$script" ]] || fail "zsh script does not wrap the bash one"

status=0
"$halfway" completion fish >/dev/null 2>&1 || status=$?
[[ $status == 2 ]] || fail "'halfway completion fish' exited $status, not 2"

[[ $("$halfway" --version) == "halfway $version" ]] || fail "--version: $("$halfway" --version)"
"$halfway" run --help | grep -q '^Usage: halfway run \[OPTIONS\] file$' || fail "run's usage line"
"$halfway" --help | grep -q '^Usage: halfway \[OPTIONS\] SUBCOMMAND$' || fail "the usage line"

# `-` as the kernel file reads standard input, and names it <stdin> in messages.
kernels=$(dirname "$0")/../../examples/kernels
from_file=$("$halfway" emit "$kernels/saxpy.hk" --ir)
from_stdin=$("$halfway" emit - --ir <"$kernels/saxpy.hk")
[[ -n $from_file && $from_stdin == "$from_file" ]] || fail "emit - --ir differs from emit FILE --ir"
[[ $(cat "$kernels/saxpy.hk" | "$halfway" sites -) == $("$halfway" sites "$kernels/saxpy.hk") ]] ||
  fail "sites - from a pipe differs from sites FILE"
status=0
err=$(printf 'kernel k(\n' | "$halfway" emit - --ir 2>&1 >/dev/null) || status=$?
[[ $status == 2 && $err == *"<stdin>:"* ]] || fail "bad text on stdin: status $status, '$err'"

[[ -f $manpage ]] || fail "no man page at $manpage"
warnings=$(groff -man -Tutf8 -ww -z "$manpage" 2>&1)
[[ -z $warnings ]] || fail "groff warns about $manpage: $warnings"
grep -q "^\.TH HALFWAY 1 .*halfway $version" "$manpage" || fail "the man page's title line"
for sub in run bench diff emit sites devices demo ops plot completion; do
  grep -q "^$sub\$" "$manpage" || fail "the man page lacks the help of $sub"
done
grep -q -- '--max-unchecked' "$manpage" || fail "the man page lacks diff's options"
echo "cli_shell.sh: OK"
