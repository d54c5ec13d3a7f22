#!/usr/bin/env bash
# Issue 21: capsim's JUnit files validate against the Jenkins xUnit plugin's JUnit schema,
# on a passing run, on a failed expectation and on bad input (exit 2 still writes a file
# with an <error> test case), and carry time attributes.
#   junit_test.sh CAPSIM SOURCE_DIR
set -euo pipefail
capsim="$1"
src="$2"
xsd="$src/tests/ship/junit/junit-10.xsd"
command -v xmllint >/dev/null || { echo "junit_test: xmllint missing (Debian: libxml2-utils)"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/capsim-junit-XXXXXX")
trap 'rm -rf "$dir"' EXIT
export CAPSIM_DB="$dir/capsim.db"
fail() { echo "junit_test: $*" >&2; exit 1; }

check() {  # FILE WANTED-EXIT ACTUAL-EXIT
  [ "$3" = "$2" ] || fail "$1: exit $3, expected $2"
  xmllint --noout --schema "$xsd" "$1" 2>"$dir/xmllint.err" || { cat "$dir/xmllint.err" >&2; fail "$1 does not validate"; }
  grep -q '<testsuite [^>]*time="' "$1" || fail "$1: no time attribute on the test suite"
  grep -q '<testcase [^>]*time="' "$1" || fail "$1: no time attribute on the test cases"
}

set +e
"$capsim" run --check --no-history --junit "$dir/pass.xml" "$src/scenarios/examples/lora-7b-one-node.yaml" >/dev/null
rc=$?
set -e
check "$dir/pass.xml" 0 "$rc"
grep -q '<failure' "$dir/pass.xml" && fail "pass.xml has a failure"

set +e
"$capsim" run --check --no-history --junit "$dir/fail.xml" --set 'expect=[training_time < 1 s]' \
  "$src/scenarios/examples/lora-7b-one-node.yaml" >/dev/null 2>&1
rc=$?
set -e
check "$dir/fail.xml" 1 "$rc"
grep -q '<failure' "$dir/fail.xml" || fail "fail.xml has no failure"

printf 'name: bad\nworkload:\n  type: trainig\n' > "$dir/bad.yaml"
set +e
"$capsim" run --check --no-history --junit "$dir/bad.xml" "$dir/bad.yaml" >/dev/null 2>&1
rc=$?
set -e
check "$dir/bad.xml" 2 "$rc"
grep -q '<error' "$dir/bad.xml" || fail "bad.xml has no <error> test case"

# The schema is not a rubber stamp: a test case without its required name is refused.
sed 's/ name="[^"]*" file=/ file=/' "$dir/pass.xml" > "$dir/broken.xml"
if xmllint --noout --schema "$xsd" "$dir/broken.xml" 2>/dev/null; then fail "a test case without a name validated"; fi
echo "junit_test: 3 JUnit files validate against junit-10.xsd"
