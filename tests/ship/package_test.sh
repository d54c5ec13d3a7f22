#!/usr/bin/env bash
# Issue 53: the Debian package is one Debian accepts and a user can read:
#   - CPack builds it from this build (as ./setup.sh package does), and lintian reports no error
#     and no warning on it (infos are printed; accepted tags are overridden in
#     packaging/debian/lintian-overrides, each with its reason);
#   - its version is the newest entry of packaging/debian/changelog;
#   - installed (unpacked with dpkg-deb -x), `man capsim` shows capsim's page, every command has
#     its page (capsim-size(1), capsim-catalog-list(1), ...), and man reads them without warnings;
#   - it carries the copyright, the changelog, the cluster examples beside the examples (a cluster
#     runs from there, reaching ../examples), and the completion scripts, whose bash one completes
#     --format values and GPU ids with the installed capsim and catalog.
#   package_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(readlink -f "$1")
src=$(readlink -f "$2")
fail() { echo "package test: FAILED: $*" >&2; exit 1; }
for tool in cpack dpkg-deb dpkg-shlibdeps lintian man; do
  command -v "$tool" >/dev/null || { echo "package test: $tool missing (./setup.sh test installs it); skipped"; exit 77; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/capsim-package-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" >/dev/null) || fail "cpack failed"
deb=$(ls "$tmp"/out/capsim_*.deb)

# lintian: no error, no warning.
lintian_out=$(lintian --display-info "$deb" 2>&1 | grep -v '^running with root privileges' || true)
[ -z "$lintian_out" ] || echo "$lintian_out"
if grep -q '^[EW]: ' <<<"$lintian_out"; then fail "lintian reports errors or warnings (above)"; fi

version=$(dpkg-deb -f "$deb" Version)
changelog=$(sed -n '1s/^capsim (\([^)]*\)).*/\1/p' "$src/packaging/debian/changelog")
[ "$version" = "$changelog" ] || fail "the package is $version, the newest changelog entry $changelog"

root="$tmp/root"
dpkg-deb -x "$deb" "$root"
for f in usr/share/doc/capsim/copyright usr/share/doc/capsim/changelog.gz usr/share/man/man1/capsim.1.gz \
         usr/share/bash-completion/completions/capsim usr/share/zsh/vendor-completions/_capsim \
         usr/share/fish/vendor_completions.d/capsim.fish usr/share/lintian/overrides/capsim; do
  [ -f "$root/$f" ] || fail "the package has no /$f"
done
for f in "$src"/scenarios/clusters/*.yaml; do
  [ -f "$root/usr/share/capsim/clusters/$(basename "$f")" ] || fail "the package has no cluster example $(basename "$f")"
done
for f in "$src"/docs/scenario.schema.json "$src"/docs/output-schemas/*.schema.json; do
  cmp -s "$f" "$root/usr/share/capsim/schemas/$(basename "$f")" || fail "the package has no schema $(basename "$f")"
done

# `man capsim` on the installed pages (MANPATH is the package's), and every command's page.
export MANPATH="$root/usr/share/man" MANWIDTH=80
page=$(man capsim 2>"$tmp/man.err") || fail "man capsim: $(cat "$tmp/man.err")"
grep -q -E '^ +capsim - capacity planning' <<<"$page" || fail "man capsim shows no NAME line:
$page"
for section in SYNOPSIS OPTIONS EXAMPLES ENVIRONMENT 'SEE ALSO'; do
  grep -q "^$section" <<<"$page" || fail "man capsim has no $section section"
done
commands=$("$root/usr/bin/capsim" --help | sed -n '/^Subcommands:$/,/^$/p' | sed -n 's/^  \([a-z][a-z0-9-]*\) .*/\1/p')
[ -n "$commands" ] || fail "capsim --help lists no subcommands"
pages=0
for cmd in $commands catalog-list history-diff; do
  man "capsim-$cmd" >/dev/null 2>&1 || fail "no man page capsim-$cmd(1)"
  pages=$((pages + 1))
done
for f in "$root"/usr/share/man/man1/*.1.gz; do
  warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' man --warnings -E UTF-8 -l "$f" 2>&1 >/dev/null) || fail "man -l $f failed"
  [ -z "$warnings" ] || fail "man warns on $(basename "$f"): $warnings"
done

# The installed capsim: a cluster example from where it is installed, and completion of
# --format values and GPU ids with the installed bash script.
export CAPSIM_DB="$tmp/capsim.db"
(cd "$tmp" && env -u CAPSIM_DATA -u CAPSIM_CATALOG "$root/usr/bin/capsim" plan \
  "$root/usr/share/capsim/clusters/team-ml-estate.yaml" >/dev/null) || fail "capsim plan on the installed cluster example failed"
complete_bash() {
  # shellcheck disable=SC2016  # the script's own $0 and $@, expanded by the inner bash
  env -u CAPSIM_DATA -u CAPSIM_CATALOG PATH="$root/usr/bin:$PATH" bash -c \
    'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _capsim; echo "${COMPREPLY[*]}"' \
    "$root/usr/share/bash-completion/completions/capsim" "$@"
}
got=$(complete_bash capsim size x.yaml --format "")
[ "$got" = "table json" ] || fail "the installed bash completion completes 'capsim size --format' to '$got'"
got=$(complete_bash capsim catalog import-calibration p.json --gpu h100-s)
[ "$got" = "h100-sxm-80gb" ] || fail "the installed bash completion completes '--gpu h100-s' to '$got'"
echo "package test: passed ($(basename "$deb"): lintian clean, man capsim and $pages command pages, completion)"
