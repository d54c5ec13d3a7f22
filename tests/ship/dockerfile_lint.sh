#!/usr/bin/env bash
# Issue 53: the Dockerfile's lint. hadolint is not packaged by Debian (bookworm, trixie) and npm's
# `hadolint` is a third party's wrapper that downloads the binary from GitHub at first use (no
# network in CI), so the hadolint rules that apply to this Dockerfile are checked here (their
# ids in brackets), and every RUN's shell is run through ShellCheck as hadolint does:
#   [DL3006, DL3007] every FROM names a tag, not latest;
#   [DL3002] the last USER is not root, and (issue 53) it is numeric, UID:GID, the ids the
#     stage's groupadd/useradd create: the kubelet refuses runAsNonRoot for a named USER;
#   [DL3014, DL3015] apt-get install -y --no-install-recommends;
#   [DL3009] each RUN that installs also deletes /var/lib/apt/lists;
#   [DL3027] apt-get, not apt;  [DL3004] no sudo;  [DL3003] WORKDIR, not cd;
#   [DL3020] COPY, not ADD;  [DL3000] WORKDIR is absolute;  [DL4000] no MAINTAINER;
#   [DL3025] CMD and ENTRYPOINT in JSON form;  [DL4006] a RUN with a pipe under SHELL
#     with -o pipefail;
#   [SC....] ShellCheck on each RUN's commands (sh).
# Not checked, by decision: [DL3008] pinned package versions. The image takes bookworm's
# current packages, security updates included, as setup.sh does.
#   dockerfile_lint.sh DOCKERFILE   (prints each problem; exit 1 if any)
set -euo pipefail
file=$1
problems=()
bad() { problems+=("$file:$1: $2"); }

# The instructions, continued lines joined: "LINE<TAB>INSTRUCTION ARGS".
instructions=$(awk '
  /^[ \t]*#/ && !cont { next }
  { if (!cont) { start = NR; text = "" } }
  { line = $0; cont = sub(/\\[ \t]*$/, "", line); text = text line " " }
  !cont && text ~ /[^ \t]/ { sub(/^[ \t]+/, "", text); sub(/[ \t]+$/, "", text); print start "\t" text }
' "$file")

last_user="" last_user_line=0 shell_pipefail=0 uid="" gid=""
while IFS=$'\t' read -r line text; do
  keyword=${text%% *}
  args=${text#"$keyword"}
  args=${args# }
  case "${keyword^^}" in
    FROM)
      image=${args%% *}
      [[ "$image" == *:* && "$image" != *:latest ]] || bad "$line" "[DL3006/DL3007] FROM $image: name a tag, not latest"
      last_user="" uid="" gid="" ;;
    USER) last_user=$args last_user_line=$line ;;
    MAINTAINER) bad "$line" "[DL4000] MAINTAINER is deprecated (a LABEL)" ;;
    ADD) bad "$line" "[DL3020] ADD: use COPY" ;;
    WORKDIR) [[ "$args" == /* || "$args" == \$* ]] || bad "$line" "[DL3000] WORKDIR $args: an absolute path" ;;
    CMD|ENTRYPOINT) [[ "$args" == \[* ]] || bad "$line" "[DL3025] $keyword: the JSON form, [\"...\"]" ;;
    SHELL) [[ "$args" == *pipefail* ]] && shell_pipefail=1 ;;
    RUN)
      if grep -q -E '(^|[;&|] *)apt ' <<<"$args"; then bad "$line" "[DL3027] apt: use apt-get"; fi
      if grep -q -E '(^|[;&|] *)sudo ' <<<"$args"; then bad "$line" "[DL3004] sudo"; fi
      if grep -q -E '(^|[;&|] *)cd ' <<<"$args"; then bad "$line" "[DL3003] cd: use WORKDIR"; fi
      if grep -q 'apt-get install' <<<"$args"; then
        grep -q -E 'apt-get install ([^&;|]* )?-y' <<<"$args" || bad "$line" "[DL3014] apt-get install without -y"
        grep -q -E 'apt-get install [^&;|]*--no-install-recommends' <<<"$args" ||
          bad "$line" "[DL3015] apt-get install without --no-install-recommends"
        grep -q 'rm -rf /var/lib/apt/lists' <<<"$args" || bad "$line" "[DL3009] the apt lists are not deleted"
      fi
      if grep -q -E '[^|]\|[^|]' <<<"$args" && [ $shell_pipefail -eq 0 ]; then
        bad "$line" "[DL4006] a pipe without SHELL [\"/bin/bash\", \"-o\", \"pipefail\", \"-c\"]"
      fi
      # The ids the stage creates, for the USER check.
      g=$(sed -n 's/.*groupadd [^&;|]*--gid \([0-9]*\).*/\1/p' <<<"$args")
      u=$(sed -n 's/.*useradd [^&;|]*--uid \([0-9]*\).*/\1/p' <<<"$args")
      [ -n "$g" ] && gid=$g
      [ -n "$u" ] && uid=$u
      if command -v shellcheck >/dev/null; then
        out=$(printf '#!/bin/sh\n%s\n' "$args" | shellcheck -s sh -f gcc - 2>&1) ||
          bad "$line" "[ShellCheck] $(tr '\n' ' ' <<<"$out")"
      fi ;;
  esac
done <<<"$instructions"

if [ -z "$last_user" ]; then
  bad "$(wc -l <"$file")" "[DL3002] the image runs as root: no USER"
elif [[ ! "$last_user" =~ ^[0-9]+:[0-9]+$ ]]; then
  bad "$last_user_line" "USER $last_user: give UID:GID by number (the kubelet refuses runAsNonRoot for a named user)"
else
  [ "${last_user%%:*}" != 0 ] || bad "$last_user_line" "[DL3002] USER 0: root"
  [ "${last_user%%:*}" = "$uid" ] || bad "$last_user_line" "USER $last_user: the stage's useradd --uid is '${uid}'"
  [ "${last_user#*:}" = "$gid" ] || bad "$last_user_line" "USER $last_user: the stage's groupadd --gid is '${gid}'"
fi

for p in "${problems[@]}"; do echo "$p"; done
[ ${#problems[@]} -eq 0 ]
