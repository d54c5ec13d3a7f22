#!/usr/bin/env bash
# Regenerates the README's desktop-app screenshots (docs/images/gui-*.png) from the real
# window in an X server (Xvfb), so they show what a user sees: the sizing view of the 70B
# pre-training, the serving view of Llama-2-70B chat on H100s at 15 requests/s (past its SLO
# knee: the violations in red), the cost view, the catalog browser and the cluster view.
#   tools/screenshots/gui.sh [BUILD_DIR]        (default: build)
# Needs build/gui/capsim-gui (./setup.sh run builds it) and xvfb-run (installed on first use
# through setup.sh, which adds xvfb to its packages only when CAPSIM_SCREENSHOTS=1).
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-build}"
gui="$build/gui/capsim-gui"
[ -x "$gui" ] || { echo "gui.sh: $gui not built: run ./setup.sh run (or cmake --build $build --target capsim-gui)" >&2; exit 2; }
command -v xvfb-run >/dev/null || CAPSIM_SCREENSHOTS=1 ./setup.sh deps
out=docs/images
# A throwaway database and settings: the screenshots do not depend on who takes them.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export CAPSIM_DB="$scratch/capsim.db" XDG_CONFIG_HOME="$scratch/config" XDG_DATA_HOME="$scratch/data"

shot() {  # NAME SCENARIO [capsim-gui options...]
  local name="$1" scenario="$2"
  shift 2
  xvfb-run --auto-servernum --server-args="-screen 0 1600x1000x24" \
    "$gui" "$scenario" --screenshot "$out/$name.png" --size 1560x960 "$@"
  echo "gui.sh: $out/$name.png"
}

shot gui-sizing scenarios/examples/llama-70b-pretrain.yaml --tab sizing
shot gui-serving scenarios/examples/llama2-70b-chat-h100.yaml --tab serving --request-rate 15
shot gui-cost scenarios/examples/ml-services-24x7.yaml --tab cost
shot gui-catalog scenarios/examples/llama-70b-pretrain.yaml --tab catalog --catalog-filter "memory >= 80 GB"
shot gui-cluster scenarios/clusters/team-ml-estate.yaml --tab cluster
