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

# The scenario file is on the test suite (the schema allows no file or line on a test case),
# and each expectation's file:line:column starts its test case's text.
grep -q '<testsuite [^>]*file="[^"]*lora-7b-one-node.yaml"' "$dir/pass.xml" || fail "pass.xml: no file on the test suite"
grep -q '<system-out>[^<]*lora-7b-one-node.yaml:[0-9][0-9]*:[0-9][0-9]*: ' "$dir/pass.xml" ||
  fail "pass.xml: no file:line:column in the test case output"
grep -q '<testsuite [^>]*file="[^"]*bad.yaml"' "$dir/bad.xml" || fail "bad.xml: no file on the test suite"

# The schema is not a rubber stamp: a test case without its required name is refused, and so is
# one with file and line attributes (the xunit-1.x schema allowed them; 2.x and 3.x do not).
sed 's/<testcase classname="\([^"]*\)" name="[^"]*"/<testcase classname="\1"/' "$dir/pass.xml" > "$dir/broken.xml"
if xmllint --noout --schema "$xsd" "$dir/broken.xml" 2>/dev/null; then fail "a test case without a name validated"; fi
sed 's/<testcase /<testcase file="x.yaml" line="1" /' "$dir/pass.xml" > "$dir/broken.xml"
if xmllint --noout --schema "$xsd" "$dir/broken.xml" 2>/dev/null; then fail "a test case with file and line validated"; fi
echo "junit_test: 3 JUnit files validate against junit-10.xsd"
