#!/usr/bin/env bash
# One GPU node check: build and run capsim-calibrate, then the PyTorch checks (ResNet-50;
# sustained GEMM clocks and a Llama-style training step; an LLM decode and prefill step).
# Writes into the folder given (default: ./gpu-check-out): calibration.json, resnet50.json,
# transformer.json, decode.json, nvidia-smi.txt, gpu.csv and the logs. Needs nvcc, CMake with
# Ninja, nlohmann-json (nlohmann-json3-dev, or $CAPSIM_NLOHMANN_JSON_INCLUDE_DIR naming a
# directory that holds nlohmann/json.hpp: a copy of another machine's /usr/include/nlohmann),
# and PyTorch with torchvision; about 5 minutes on an H100.
set -uo pipefail
out=${1:-gpu-check-out}
mkdir -p "$out"
nvidia-smi -q > "$out/nvidia-smi.txt" 2>&1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem --format=csv > "$out/gpu.csv" 2>&1
cmake -S hardware_catalog/calibration -B build-calibrate -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 \
  ${CAPSIM_NLOHMANN_JSON_INCLUDE_DIR:+-DCAPSIM_NLOHMANN_JSON_INCLUDE_DIR="$CAPSIM_NLOHMANN_JSON_INCLUDE_DIR"} \
  > "$out/build.log" 2>&1 && cmake --build build-calibrate >> "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; }
if [ -x build-calibrate/capsim-calibrate ]; then
  timeout 240 build-calibrate/capsim-calibrate -o "$out/calibration.json" > "$out/calibrate.log" 2>&1
  echo "capsim-calibrate exit $?"
fi
PYTHONUNBUFFERED=1 timeout 200 python3 tools/gpu-check/resnet50_torch.py > "$out/resnet50.json" 2> "$out/resnet50.log"
echo "resnet50 exit $?"
PYTHONUNBUFFERED=1 timeout 300 python3 tools/gpu-check/transformer_torch.py > "$out/transformer.json" 2> "$out/transformer.log"
echo "transformer exit $?"
PYTHONUNBUFFERED=1 timeout 300 python3 tools/gpu-check/decode_torch.py > "$out/decode.json" 2> "$out/decode.log"
echo "decode exit $?"
tail -5 "$out/calibrate.log"; cat "$out/resnet50.log" "$out/transformer.log" "$out/decode.log" "$out/gpu.csv"
