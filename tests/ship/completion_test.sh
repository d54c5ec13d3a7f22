#!/usr/bin/env bash
# Issue 53: the completion scripts complete option values, not only commands and options:
#   - every command's --format completes exactly the formats its --help lists;
#   - fixed values (export targets, IsMember choices) are in the script;
#   - GPU ids, node types and entry ids come from the catalog when completing, the same ids
#     `capsim catalog list` shows, from the catalog --catalog names on the command line;
#   - --opt=value (bash splits it at '=') completes like --opt value.
# bash always; zsh (through bashcompinit) and fish where they are installed.
#   completion_test.sh CAPSIM SOURCE_DIR
set -euo pipefail
capsim=$(readlink -f "$1")
src=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/capsim-completion-XXXXXX")
trap 'rm -rf "$dir"' EXIT
export CAPSIM_DB="$dir/capsim.db"
# The scripts call `capsim __complete` by the name typed: this capsim.
PATH="$(dirname "$capsim"):$PATH"
export PATH
fail() { echo "completion test: FAILED: $*" >&2; exit 1; }
failures=0
cd "$dir"  # files the scripts offer besides values: none here

"$capsim" completion bash > capsim.bash
# What bash completes for the words (the last one is the word at the cursor), one line.
complete_bash() {
  bash -c 'source ./capsim.bash; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _capsim; echo "${COMPREPLY[*]}"' bash "$@"
}
expect() {  # WANT WORDS...
  local want=$1 got
  shift
  got=$(complete_bash "$@")
  if [ "$got" != "$want" ]; then
    echo "completion test: '$*' completes to '$got', expected '$want'" >&2
    failures=$((failures + 1))
  fi
}

# The ids of a catalog section as `capsim catalog list` gives them, starting with a prefix.
ids() {  # SECTION PREFIX [GLOBAL OPTIONS...]
  local section=$1 prefix=$2
  shift 2
  "$capsim" "$@" catalog list "$section" --format csv | tail -n +2 | cut -d, -f1 | grep "^$prefix" | tr '\n' ' ' | sed 's/ $//'
}

# Every command's --format: the formats its --help lists ("Output format: table|json").
commands=()
walk() {
  local sub
  for sub in $("$capsim" "$@" --help | sed -n '/^Subcommands:$/,/^$/p' | sed -n 's/^  \([a-z][a-z0-9-]*\) .*/\1/p'); do
    commands+=("$*${*:+ }$sub")
    walk "$@" "$sub"
  done
}
walk
formats=0
for c in "${commands[@]}"; do
  read -r -a words <<<"$c"
  listed=$("$capsim" "${words[@]}" --help | sed -n 's/.*--format FORMAT *Output format: \([a-z|]*\)$/\1/p')
  [ -n "$listed" ] || continue
  expect "${listed//|/ }" capsim "${words[@]}" --format ""
  formats=$((formats + 1))
done
[ "$formats" -ge 10 ] || fail "only $formats commands have --format (the help's 'Output format:' line changed?)"
expect "json" capsim size x.yaml --format = j
expect "table json" capsim plan c.yaml -f ""
expect "gke karpenter terraform eks k8s" capsim export ""
expect "train infer" capsim memory --mode ""
expect "bash zsh fish" capsim completion ""
expect "list run size simulate cost plan accuracy compare estimate memory models validate history-list history-diff catalog-list catalog-show catalog-check catalog-validate catalog-import-calibration catalog-import-skypilot sweep" capsim schema --output ""

# Catalog lookups: GPU ids, node types, entry ids, and another catalog given on the line.
expect "$(ids gpus a10)" capsim catalog import-calibration p.json --gpu a10
expect "$(ids gpus h100-s)" capsim catalog show h100-s
expect "$(ids instances aws-p5)" capsim export k8s x.yaml --node-type aws-p5
fixture="$src/tests/cli/fixtures/catalog"
expect "$(ids gpus '' --catalog "$fixture")" capsim --catalog "$fixture" catalog import-calibration p.json --gpu ""
if [ -z "$(ids gpus a10)" ] || [ -z "$(ids gpus '' --catalog "$fixture")" ]; then fail "the catalogs list no GPUs"; fi
[ $failures -eq 0 ] || fail "$failures completions differ"

shells=bash
if command -v zsh >/dev/null; then
  "$capsim" completion zsh > capsim.zsh
  # zsh filters the candidates by the word itself; its bashcompinit compgen returns them all.
  got=$(zsh -c 'source ./capsim.zsh 2>/dev/null; emulate sh; COMP_WORDS=(capsim size x.yaml --format ""); COMP_CWORD=4
                _capsim; echo "${COMPREPLY[*]}"; COMP_WORDS=(capsim catalog import-calibration p.json --gpu ""); COMP_CWORD=5
                _capsim; echo "${COMPREPLY[*]}"')
  [ "$(head -n 1 <<<"$got")" = "table json" ] || fail "zsh: size --format completes to '$(head -n 1 <<<"$got")'"
  [ "$(tail -n 1 <<<"$got")" = "$(ids gpus '')" ] || fail "zsh: --gpu completes to '$(tail -n 1 <<<"$got")'"
  shells+=" zsh"
fi
if command -v fish >/dev/null; then
  "$capsim" completion fish > capsim.fish
  got=$(fish -c 'source ./capsim.fish; complete -C "capsim size x.yaml --format "; complete -C "capsim catalog show h100-s"' |
        cut -f1 | tr '\n' ' ' | sed 's/ $//')
  [ "$got" = "json table $(ids gpus h100-s | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')" ] ||
    fail "fish: --format and catalog show complete to '$got'"
  shells+=" fish"
fi
echo "completion test: passed ($shells; --format of $formats commands, GPU ids, node types)"
