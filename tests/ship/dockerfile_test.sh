#!/usr/bin/env bash
# Issue 21: the Dockerfile is not built in CI (no container runtime here, and no Dockerfile
# linter is packaged in Debian bookworm), so its promises are checked where they can be:
#   - it passes dockerfile_lint.sh (hadolint's rules that apply, ShellCheck on each RUN; issue
#     53), which refuses the mistakes it is there for (negative controls below);
#   - its USER is the numeric user and group capsim's pods run as (runAsUser, runAsGroup in the
#     sweep's Job and scenarios/include/capsim/scenarios/pod_security.hpp);
#   - both stages start from debian:bookworm and install Debian packages only;
#   - the runtime stage installs exactly setup.sh's runtime_packages, and those are exactly the
#     packages of the shared libraries capsim links (readelf NEEDED -> dpkg -S), less the C/C++
#     runtime every Debian image has, Qt and the OpenGL libraries Qt6::Gui brings into the link
#     (libglx0, libopengl0, libgl1: a fresh configure finds them, an older one may not), which the
#     image's build leaves out, and the sanitizer runtimes of a --sanitize build;
#   - the build stage installs only packages setup.sh installs;
#   - the image tag README's `docker build` gives is the image `capsim sweep` names.
#   dockerfile_test.sh SOURCE_DIR CAPSIM_BINARY
set -euo pipefail
src=$1
capsim=$2
fail() { echo "dockerfile test: FAILED: $*" >&2; exit 1; }

# The words of a bash array assignment in setup.sh: name=(a b "${other[@]}" ...), one line.
setup_list() { sed -n "s/^$1=(\(.*\))\$/\1/p" "$src/setup.sh"; }
runtime=$(setup_list runtime_packages | tr ' ' '\n' | sort)
[ -n "$runtime" ] || fail "setup.sh has no runtime_packages=(...) line"
setup_all=$( { sed -n '/^packages=(/,/^)/p' "$src/setup.sh" | grep -v '^packages=(\|^)' | tr ' ' '\n'; echo "$runtime"; } |
  grep -v '^\s*$' | grep -v '\${' | sort -u)

# The packages of each `apt-get install` in the Dockerfile, stage by stage (continued lines joined).
stage_packages() {
  awk -v want="$1" '
    /^FROM / { stage++ }
    stage == want { line = line $0 "\n" }
    END { print line }' "$src/Dockerfile" |
    sed -e ':a' -e '/\\$/N; s/\\\n//; ta' |
    grep 'apt-get install' | sed 's/.*--no-install-recommends//; s/&&.*//' | tr ' ' '\n' | grep -v '^\s*$' | sort
}
# The lint, and that it is no rubber stamp: each mutation must be refused.
lint="$(dirname "$0")/dockerfile_lint.sh"
bash "$lint" "$src/Dockerfile" || fail "the Dockerfile does not pass dockerfile_lint.sh (above)"
controls=$(mktemp -d)
for mutation in 's/^USER .*/USER capsim/' 's/ --no-install-recommends//' 's/^COPY \. \./ADD . ./' \
                's/^CMD .*/CMD capsim --help/' 's/^RUN capsim /RUN cd \/tmp \&\& capsim /'; do
  sed "$mutation" "$src/Dockerfile" > "$controls/Dockerfile"
  cmp -s "$src/Dockerfile" "$controls/Dockerfile" && fail "negative control '$mutation' changed nothing"
  if bash "$lint" "$controls/Dockerfile" >/dev/null; then fail "the lint passed a Dockerfile changed by '$mutation'"; fi
done
rm -rf "$controls"
# The image's user is the one the pods name.
user=$(sed -n 's/^USER //p' "$src/Dockerfile" | tail -n 1)
header="$src/scenarios/include/capsim/scenarios/pod_security.hpp"
[ "$user" = "$(sed -n 's/.*kPodUserId = \([0-9]*\);/\1/p' "$header"):$(sed -n 's/.*kPodGroupId = \([0-9]*\);/\1/p' "$header")" ] ||
  fail "the Dockerfile's USER $user is not kPodUserId:kPodGroupId of $header"

[ "$(grep -c '^FROM debian:bookworm\( AS [a-z]*\)\?$' "$src/Dockerfile")" = "$(grep -c '^FROM ' "$src/Dockerfile")" ] ||
  fail "every stage must start FROM debian:bookworm"
grep -q -E 'curl|wget|pip |npm |ADD http' "$src/Dockerfile" && fail "the Dockerfile fetches something that is not a Debian package"

image_runtime=$(stage_packages 2)
[ "$image_runtime" = "$runtime" ] || fail "the image installs
$image_runtime
but setup.sh's runtime_packages are
$runtime"
for p in $(stage_packages 1); do
  grep -q -x -F "$p" <<<"$setup_all" || fail "the build stage installs $p, which setup.sh does not"
done

# The packages behind the libraries capsim links directly.
linked=$(readelf -d "$capsim" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | while read -r lib; do
  path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64|x32|AArch64|i386/ { print $NF; exit }')
  [ -n "$path" ] || path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
  { dpkg -S "$(readlink -f "$path")" 2>/dev/null || true; } | head -n 1 | cut -d: -f1
done | grep -v -E '^(libc6|libstdc\+\+6|libgcc-s1|libqt6.*|libglx0|libopengl0|libgl1|libasan[0-9]*|libubsan[0-9]*)$' | sort -u)
[ "$linked" = "$runtime" ] || fail "capsim links the libraries of
$linked
but setup.sh's runtime_packages are
$runtime"

# The tag people build and the image the sweep manifest runs.
tag=$(sed -n 's/.*docker build -t \(capsim:[^ ]*\) .*/\1/p' "$src/README.md" | head -n 1)
[ -n "$tag" ] || fail "README.md shows no 'docker build -t capsim:...'"
grep -q -F "docker build -t $tag " "$src/Dockerfile" || fail "the Dockerfile's header builds another tag than README's $tag"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$src/scenarios/examples/lora-7b-one-node.yaml" "$dir/s.yaml"
manifest=$(CAPSIM_DB="$dir/db" "$capsim" sweep "$dir/s.yaml" --sweep 'hardware.max_gpus=8,16' --shards 2) ||
  fail "capsim sweep failed"
grep -q -E "^ +image: ${tag//./\\.}$" <<<"$manifest" || fail "capsim sweep does not name the image $tag:
$manifest"
if ! grep -q -E "^ +runAsUser: ${user%%:*}$" <<<"$manifest" || ! grep -q -E "^ +runAsGroup: ${user#*:}$" <<<"$manifest"; then
  fail "capsim sweep's pods do not run as the image's USER $user"
fi
echo "dockerfile test: passed (lint clean, USER $user; runtime packages: $(tr "\n" " " <<<"$runtime"))"
