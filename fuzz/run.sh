#!/usr/bin/env bash
# The short fuzz run (a separate CI step, not part of ctest): builds the libFuzzer targets
# with clang-14 in build-fuzz/ and runs each for SECONDS (default 60), one after another.
#
#   fuzz/run.sh [SECONDS]
#
# Seeds are the shipped files themselves, so each run starts from today's formats, never
# from a copy that has fallen behind: data/catalog/ (catalog), scenarios/examples/ and
# scenarios/clusters/ (scenario), scenarios/examples/ (pipeline), data/calibration/synthetic/
# (calibration), scenarios/clusters/ (export); fuzz/corpus/units/ holds the unit strings,
# which no shipped file is, and fuzz/corpus/export/ cluster files with hostile names and
# export flag values (export_fuzzer.cpp says how an input carries them). Inputs
# libFuzzer finds go to build-fuzz/fuzz-corpus/<target>/ so the seeds stay as they are. A
# crash, leak or timeout stops the run with a non-zero exit and leaves the input in
# build-fuzz/fuzz-artifacts/; make it a regression test in tests/reliability/. Environment:
# CAPSIM_FUZZ_BUILD (build directory), CAPSIM_FUZZ_TARGETS (a subset, space separated).
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CAPSIM_FUZZ_BUILD:-$root/build-fuzz}"
targets="${CAPSIM_FUZZ_TARGETS:-fuzz_units fuzz_calibration fuzz_catalog fuzz_scenario fuzz_pipeline fuzz_export}"

launcher=()
if command -v ccache >/dev/null; then  # as in setup.sh: another clone of the same sources hits
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
if [[ ! -f "$build/build.ninja" ]]; then
  CC="${CC:-clang-14}" CXX="${CXX:-clang++-14}" cmake -S "$root" -B "$build" -G Ninja -DCAPSIM_FUZZ=ON \
    -DCAPSIM_BUILD_GUI=OFF -DCAPSIM_BUILD_TESTS=OFF -DCAPSIM_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
fi
# shellcheck disable=SC2086
cmake --build "$build" --target $targets

mkdir -p "$build/fuzz-artifacts"
seed_dirs() {
  case "$1" in
    fuzz_catalog) echo "$root/data/catalog" ;;
    fuzz_scenario) echo "$root/scenarios/examples $root/scenarios/clusters" ;;
    fuzz_pipeline) echo "$root/scenarios/examples" ;;
    fuzz_export) echo "$root/scenarios/clusters $root/fuzz/corpus/export" ;;
    fuzz_calibration) echo "$root/data/calibration/synthetic" ;;
    *) echo "$root/fuzz/corpus/${1#fuzz_}" ;;
  esac
}

for target in $targets; do
  read -r -a seeds <<<"$(seed_dirs "$target")"
  work="$build/fuzz-corpus/${target#fuzz_}"
  mkdir -p "$work"
  echo "== $target: $seconds s"
  log="$build/fuzz-logs/$target.log"
  mkdir -p "$(dirname "$log")"
  set +e
  # A fixed seed (CAPSIM_FUZZ_SEED, default 1) makes a CI run repeatable: the same
  # mutations in the same order on the same code. The timeout is for hangs: a whole-pipeline
  # input (road-sign-ocr sizes 728 deployments and simulates the best) takes 5 s under ASan on
  # an idle 2-core machine and took over 15 s on a busy one, a false alarm at -timeout=10.
  "$build/fuzz/$target" "$work" "${seeds[@]}" -seed="${CAPSIM_FUZZ_SEED:-1}" -max_total_time="$seconds" -timeout=40 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$target-" >"$log" 2>&1
  status=$?
  set -e
  grep -E '^(#[0-9]+[[:space:]]+DONE|Done [0-9]+ runs|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" || true
  if [[ $status -ne 0 ]]; then
    tail -n 40 "$log" >&2
    echo "$target failed (exit $status); log $log, inputs in $build/fuzz-artifacts/" >&2
    exit "$status"
  fi
done
