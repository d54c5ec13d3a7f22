#!/usr/bin/env bash
# capsim set-up: installs what is missing (Debian bookworm packages), builds, and then
#   ./setup.sh run      builds the capsim command only and runs the main job on a shipped example
#   ./setup.sh test     builds everything and runs the whole test suite
#   ./setup.sh package  builds the Debian package (build/capsim_VERSION_ARCH.deb) and checks that
#                       the capsim it installs runs from where it lands, without this source tree
# All build with warnings as errors.
#   ./setup.sh fuzz [SECONDS]  the libFuzzer targets, SECONDS each (default 60), with clang-14
#   ./setup.sh deps     installs the packages only
# Options: --sanitize (AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/).
# Idempotent: packages already installed are not touched; the build is incremental.
set -euo pipefail

cd "$(dirname "$0")"
mode="${1:-run}"
shift || true
sanitize=OFF
fuzz_seconds=60
for arg in "$@"; do
  case "$arg" in
    --sanitize) sanitize=ON ;;
    *[!0-9]*|'') echo "setup.sh: unknown option '$arg' (expected --sanitize, or SECONDS after fuzz)" >&2; exit 2 ;;
    *) [ "$mode" = fuzz ] || { echo "setup.sh: '$arg': only fuzz takes SECONDS" >&2; exit 2; }
       fuzz_seconds="$arg" ;;
  esac
done
case "$mode" in
  run|test|build|deps|fuzz|package) ;;
  *) echo "usage: ./setup.sh run|test|build|package|deps [--sanitize] | fuzz [SECONDS]" >&2; exit 2 ;;
esac

# What the capsim command needs at run time (the container image installs exactly these, see
# Dockerfile; tests/ship checks both lists against the libraries capsim links).
runtime_packages=(libsimgrid3.32 libyaml-cpp0.7 libsqlite3-0 libfmt9 libpugixml1v5)
packages=(
  build-essential cmake ninja-build pkg-config
  libboost-graph-dev libeigen3-dev libsimgrid-dev libyaml-cpp-dev libsqlite3-dev sqlite3
  doctest-dev libcli11-dev libfmt-dev nlohmann-json3-dev libpugixml-dev libbenchmark-dev
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev qt6-svg-dev ccache
  "${runtime_packages[@]}"
)
# The export validation test runs Kubernetes' and Karpenter's schemas in Node.js
# (tests/exports/, npm packages pinned in its package-lock.json).
# The JUnit test validates against the Jenkins JUnit schema with xmllint (libxml2-utils).
# The PDF report test reads the reports' text back with pdftotext (poppler-utils).
# The README test reruns its examples with Python (tools/readme/rerun.py); the output schema
# test validates every command's JSON with python3-jsonschema (tests/ship/output_schemas_test.py).
# The package test (tests/ship/package_test.sh) builds the .deb with CPack (dpkg-shlibdeps:
# dpkg-dev, file), runs lintian on it and reads its man pages with man; the completion test
# runs the scripts in bash, and in zsh and fish where they are installed.
if [ "$mode" = test ]; then
  packages+=(shellcheck libxml2-utils poppler-utils python3 python3-jsonschema help2man dpkg-dev file lintian man-db)
  # Debian's, unless a node and npm are there already (another nodejs build ships its own npm).
  command -v node >/dev/null || packages+=(nodejs)
  command -v npm >/dev/null || packages+=(npm)
fi
# CPack's Debian generator reads shared-library dependencies with dpkg-shlibdeps; the man
# pages are made by help2man.
[ "$mode" = package ] && packages+=(dpkg-dev file help2man)
# The README's GUI screenshots are taken in a real X server (tools/screenshots/gui.sh sets
# CAPSIM_SCREENSHOTS=1 and runs `./setup.sh deps`); nothing else needs Xvfb.
[ "${CAPSIM_SCREENSHOTS:-0}" = 1 ] && packages+=(xvfb xauth)
# libFuzzer comes with clang's runtime libraries.
[ "$mode" = fuzz ] && packages+=(clang-14 libclang-rt-14-dev)

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "setup.sh: installing ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup.sh: run as root to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

install_missing
[ "$mode" = deps ] && exit 0
[ "$mode" = fuzz ] && exec fuzz/run.sh "$fuzz_seconds"

jobs=$(nproc 2>/dev/null || echo 2)
if [ "$sanitize" = ON ]; then build=build-asan; else build=build; fi
werror=ON  # the shipped build is warning-free; keep it so (CI and users build the same way)
# Under the sanitizers GCC 12 reports false -Wuninitialized/-Wmaybe-uninitialized inside
# third-party headers (Boost.Graph, std::regex) it inlines: keep the warnings, not the error.
[ "$sanitize" = ON ] && werror=OFF
# CI runs on 2 cores, about three times slower than the machine these times were taken on, and
# builds twice (plain, sanitizers) before fuzzing, so both builds skip what the run does not use:
#   - the plain build is -O2 without debug info (-g costs a third more compile time here);
#   - the sanitizer build only runs the suite: no benchmarks, and -O1 -g1 (what the sanitizers'
#     own documentation suggests; line tables are enough for their reports), half the compile
#     time of -O2 -g under ASan.
if [ "$sanitize" = ON ]; then
  build_flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
    -DCAPSIM_BUILD_BENCH=OFF)
else
  build_flags=(-DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG")
fi
# ccache: a rebuild, or a fresh clone of the same sources on a machine that built them before
# (CI), compiles only what changed. Paths under the checkout are hashed relative to it, so
# another clone's directory still hits.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build" -G Ninja "${build_flags[@]}" "${launcher[@]}" \
  -DCAPSIM_WERROR="$werror" -DCAPSIM_SANITIZE="$sanitize" >/dev/null
# The main job needs the capsim command and what it links, not the tests and benchmarks; and
# the desktop app where the build has it (Qt found, CAPSIM_BUILD_GUI on), so the README's
# `build/gui/capsim-gui` works after the quick start.
case "$mode" in
  run)
    run_targets=(capsim)
    grep -q '^build gui/capsim-gui:' "$build/build.ninja" && run_targets+=(capsim-gui)
    cmake --build "$build" -j "$jobs" --target "${run_targets[@]}" ;;
  package) cmake --build "$build" -j "$jobs" --target capsim capsim-gui capsim_system_files ;;
  *) cmake --build "$build" -j "$jobs" ;;
esac

case "$mode" in
  package)
    (cd "$build" && cpack -G DEB >/dev/null)
    deb=$(ls -t "$build"/capsim_*.deb | head -n 1)
    # The package's capsim, unpacked where this tree is not: it must find its own data.
    check=$(mktemp -d)
    trap 'rm -rf "$check"' EXIT
    dpkg-deb -x "$deb" "$check/root"
    (cd "$check" && env -u CAPSIM_DATA -u CAPSIM_CATALOG -u CAPSIM_VALIDATION CAPSIM_DB="$check/capsim.db" \
      ./root/usr/bin/capsim size root/usr/share/capsim/examples/lora-7b-one-node.yaml >/dev/null)
    echo "package: $deb ($(dpkg-deb -f "$deb" Depends))"
    echo "install it with: apt-get install ./$deb"
    ;;
  run)
    # The main job on a shipped example: plan the training of a 70B model, check its
    # expectations, and write the sizing report.
    mkdir -p reports
    "./$build/cli/capsim" run --check scenarios/examples/llama-70b-pretrain.yaml \
      --report reports/llama-70b-pretrain.html
    echo "report: reports/llama-70b-pretrain.html"
    ;;
  test)
    # The export validators (npm packages pinned in tests/exports/package-lock.json) go in
    # the build directory; the export test skips, saying so, when they are missing.
    npm_dir="$build/exports-npm"
    if [ ! -f "$npm_dir/node_modules/.package-lock.json" ] ||
       ! cmp -s tests/exports/package-lock.json "$npm_dir/package-lock.json"; then
      mkdir -p "$npm_dir"
      cp tests/exports/package.json tests/exports/package-lock.json "$npm_dir/"
      (cd "$npm_dir" && npm ci --no-audit --no-fund --loglevel=error) ||
        echo "setup.sh: npm ci failed; the export schema test will be skipped" >&2
    fi
    export QT_QPA_PLATFORM=offscreen
    # Under the sanitizers, leave out what adds time but no code path: the packaging checks
    # (ship.*), the npm schema validation of exports, and two tests that run every command on
    # every example again for their text (the exponent-form and one-plan checks); the JSON of
    # every command on every example (the NaN test) and the examples' goldens still run there.
    skip=()
    # The two accuracy reproduction tests replan every llm-serving row, which the corpus test
    # already plans under the sanitizers.
    [ "$sanitize" = ON ] && skip=(-E '^(ship\..*|exports\.validate|no text output of any command on any shipped example.*|every shipped example: size, simulate, cost, run, report and export show one plan|accuracy: every llm-serving row.s scenario.*|accuracy: every training row.s scenario.*|capsim accuracy --scenario ROW.*)$')
    ctest --test-dir "$build" --output-on-failure -j "$jobs" "${skip[@]}"
    ;;
esac
