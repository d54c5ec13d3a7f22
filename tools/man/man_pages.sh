#!/usr/bin/env bash
# The man pages, made from each command's --help by help2man (Debian: help2man), as Debian
# installs them (gzip -9n): capsim(1); capsim-COMMAND(1) for every command and subcommand
# (capsim-size(1), capsim-catalog-list(1)), found by walking the "Subcommands:" lists; and
# capsim-gui(1) when its binary is given. The pages carry the date of the newest Debian
# changelog entry (SOURCE_DATE_EPOCH), so a rebuild of a release writes the same bytes.
# The build runs this (cmake/package.cmake); OUTDIR is replaced whole.
#   man_pages.sh OUTDIR CHANGELOG VERSION CAPSIM [CAPSIM_GUI]
set -euo pipefail
out=$1
changelog=$2
version=$3
capsim=$(readlink -f "$4")
gui=${5:+$(readlink -f "$5")}
command -v help2man >/dev/null || { echo "man_pages.sh: help2man is missing (Debian: help2man)" >&2; exit 1; }
date=$(sed -n 's/^ -- .*>  //p' "$changelog" | head -n 1)
SOURCE_DATE_EPOCH=$(date -d "$date" +%s) || { echo "man_pages.sh: no date in $changelog" >&2; exit 1; }
export SOURCE_DATE_EPOCH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/pages"

# A command's subcommands: the names of its --help's "Subcommands:" list, in order.
subcommands() {
  "$capsim" "$@" --help | sed -n '/^Subcommands:$/,/^$/p' | sed -n 's/^  \([a-z][a-z0-9-]*\) .*/\1/p'
}

# Every command path below the root, depth first: "catalog", "catalog list", ..., "size", ...
paths=()
walk() {
  local sub
  for sub in $(subcommands "$@"); do
    paths+=("$*${*:+ }$sub")
    walk "$@" "$sub"
  done
}
walk

page_name() { local p="capsim $*"; echo "${p// /-}"; }

# SEE ALSO: the root lists every page; a command lists the root, its parent and its children.
see_also() {
  local name first=1 seen=" $1 "
  shift
  echo "[SEE ALSO]"
  for name in "$@"; do
    [[ "$seen" == *" $name "* ]] && continue
    seen+="$name "
    [ $first -eq 1 ] || echo ","
    printf '.BR %s (1)' "$name"
    first=0
  done
  echo
}

# help2man names a page after its program, so each page's program is a wrapper of that name
# that runs `capsim COMMAND`. Its --help marks the lines of the Examples section with "$ ",
# which help2man sets line by line in a constant-width font (it joins other indented lines).
wrapper() {  # NAME COMMAND...
  local name=$1
  shift
  cat > "$work/bin/$name" <<SH
#!/bin/sh
case " \$* " in
  *" --help "*) "$capsim" $* "\$@" | sed '/^Examples:\$/,/^[^ ]/ s/^  \([^ ]\)/  \$ \1/' ;;
  *) exec "$capsim" $* "\$@" ;;
esac
SH
  chmod +x "$work/bin/$name"
}

# capsim(1): the environment and the files it reads.
cat > "$work/root.h2m" <<'H2M'
[ENVIRONMENT]
.TP
.B CAPSIM_DATA
The data directory (catalog/, validation/, examples/); --data overrides it. Default: ../share/capsim beside the executable, /usr/share/capsim for the Debian package.
.TP
.B CAPSIM_CATALOG
Another catalog directory; --catalog overrides it.
.TP
.B CAPSIM_DB
The SQLite database (catalog cache and run history); --db overrides it. Default: $XDG_DATA_HOME/capsim/capsim.db.
[FILES]
.TP
.I /usr/share/capsim/catalog/
The hardware catalog: GPUs, CPUs, interconnects, networks, servers, instances, facilities, each number with its source and date.
.TP
.I /usr/share/capsim/examples/
Example scenarios; \fI/usr/share/capsim/clusters/\fR holds example cluster scenarios for capsim plan.
.TP
.I /usr/share/doc/capsim/
The README and the reference documentation (scenario format, exports, plan schema).
H2M
all_pages=(capsim)
for p in "${paths[@]}"; do all_pages+=("$(page_name "$p")"); done
[ -n "$gui" ] && all_pages+=(capsim-gui)
see_also capsim "${all_pages[@]}" >> "$work/root.h2m"

# The root page: its description is the first line of --help less the "capsim: " prefix.
wrapper capsim
name=$("$capsim" --help | head -n 1 | sed 's/^capsim: //')
(cd "$work/bin" && PATH="$work/bin:$PATH" help2man --no-info --section=1 --version-string="$version" \
  --name="$name" --include="$work/root.h2m" --output="$work/pages/capsim.1" capsim)

for p in "${paths[@]}"; do
  page=$(page_name "$p")
  wrapper "$page" "$p"
  parent=$(page_name "${p% *}")
  [ "$p" = "${p% *}" ] && parent=capsim
  children=()
  for c in "${paths[@]}"; do
    [[ "$c" == "$p "* && "${c#"$p "}" != *" "* ]] && children+=("$(page_name "$c")")
  done
  see_also "$page" capsim "$parent" "${children[@]}" > "$work/$page.h2m"
  read -r -a words <<<"$p"
  name=$("$capsim" "${words[@]}" --help | head -n 1)
  (cd "$work/bin" && PATH="$work/bin:$PATH" help2man --no-info --section=1 --version-string="$version" \
    --name="$name" --include="$work/$page.h2m" --output="$work/pages/$page.1" "$page")
done

if [ -n "$gui" ]; then
  see_also capsim-gui capsim > "$work/gui.h2m"
  ln -s "$gui" "$work/bin/capsim-gui"
  (cd "$work/bin" && PATH="$work/bin:$PATH" QT_QPA_PLATFORM=offscreen help2man --no-info --section=1 \
    --version-string="$version" --name="what-if capacity planning for ML workloads, on the desktop" \
    --include="$work/gui.h2m" --output="$work/pages/capsim-gui.1" capsim-gui)
fi

gzip -9n "$work"/pages/*.1
rm -rf "$out"
mkdir -p "$(dirname "$out")"
mv "$work/pages" "$out"
pages=("$out"/*.1.gz)
echo "man_pages.sh: ${#pages[@]} pages in $out"
