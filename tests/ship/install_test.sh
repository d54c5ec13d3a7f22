#!/usr/bin/env bash
# Issue 21: `cmake --install` gives a capsim that runs from wherever the install tree lands.
# Installs the build into a temporary prefix, moves that prefix elsewhere, and runs the moved
# copy from a third directory with CAPSIM_DATA (and the older CAPSIM_CATALOG/CAPSIM_VALIDATION)
# unset: it can find its data only beside itself.
#   install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install test: FAILED: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" --strip >/dev/null
for f in bin/capsim share/capsim/catalog/gpus.yaml share/capsim/validation share/capsim/examples/lora-7b-one-node.yaml \
         share/doc/capsim/README.md share/doc/capsim/plan-schema.md; do
  [ -e "$tmp/prefix/$f" ] || fail "cmake --install did not install $f"
done
mv "$tmp/prefix" "$tmp/moved"
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
run() { env -u CAPSIM_DATA -u CAPSIM_CATALOG -u CAPSIM_VALIDATION CAPSIM_DB="$tmp/capsim.db" "$@"; }

# No path into the source tree is compiled in.
if grep -q -a -F "$source/data" "$tmp/moved/bin/capsim"; then fail "the binary holds the source data path $source/data"; fi

version=$(run "$tmp/moved/bin/capsim" --version) || fail "capsim --version exited $?"
echo "$version"
grep -q -F "data     $tmp/moved/share/capsim (beside the executable)" <<<"$version" || fail "--version does not name the moved data directory"
grep -q -E "^commit   [0-9a-f]{7,}|^commit   unknown" <<<"$version" || fail "--version names no commit"
grep -q -E "newest figure as of [0-9]{4}-[0-9]{2}" <<<"$version" || fail "--version names no catalog date"

out=$(run "$tmp/moved/bin/capsim" size "$tmp/moved/share/capsim/examples/lora-7b-one-node.yaml") || fail "capsim size exited $?"
grep -q "^Plan (recommendation)" <<<"$out" || fail "capsim size printed no plan: $out"

# The overrides: --data and $CAPSIM_DATA win over the executable's neighbourhood, and a wrong
# one is an error that names it (exit 3: the environment, not the input).
set +e
err=$(run env CAPSIM_DATA="$tmp/nowhere" "$tmp/moved/bin/capsim" size "$tmp/moved/share/capsim/examples/lora-7b-one-node.yaml" 2>&1 >/dev/null)
code=$?
set -e
[ $code -eq 3 ] || fail "a missing \$CAPSIM_DATA exited $code, not 3"
grep -q -F "error: \$CAPSIM_DATA: no capsim data directory at '$tmp/nowhere'" <<<"$err" || fail "unexpected error: $err"
mv "$tmp/moved/share/capsim" "$tmp/data"
set +e
run "$tmp/moved/bin/capsim" size "$tmp/data/examples/lora-7b-one-node.yaml" >/dev/null 2>&1
code=$?
set -e
[ $code -eq 3 ] || fail "with its data moved away capsim exited $code, not 3"
run "$tmp/moved/bin/capsim" --data "$tmp/data" size "$tmp/data/examples/lora-7b-one-node.yaml" >/dev/null || fail "--data DIR did not work"
run env CAPSIM_DATA="$tmp/data" "$tmp/moved/bin/capsim" accuracy --group megatron-3d >/dev/null || fail "\$CAPSIM_DATA did not reach the validation data"
echo "install test: passed"
