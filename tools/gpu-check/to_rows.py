"""Validation rows (data/validation/measured-here/) from the GPU checks' outputs.

  python3 tools/gpu-check/to_rows.py OUT_DIR GPU_ID "DEVICE DESCRIPTION" [--fit] > rows.yaml

OUT_DIR holds resnet50.json and transformer.json (data/calibration/<gpu>-<date>/); GPU_ID is
the catalog GPU. --fit marks the mixed-precision ResNet-50 training pair (NCHW and
channels-last) fit: true, as the rows a model constant was chosen on. Prints three YAML documents' rows, each under a '# kind' line: cnn-training,
vision-inference and training rows, to be appended to the folder's three files.
"""
import json
import os
import sys

if len(sys.argv) not in (4, 5) or (len(sys.argv) == 5 and sys.argv[4] != "--fit"):
    sys.exit(__doc__)
out_dir, gpu, device = sys.argv[1], sys.argv[2], sys.argv[3]
fit_pair = len(sys.argv) == 5
rel = os.path.relpath(out_dir, os.path.join(os.path.dirname(__file__), "..", ".."))
res = json.load(open(os.path.join(out_dir, "resnet50.json")))
tf = json.load(open(os.path.join(out_dir, "transformer.json")))
src = (f"capsim GPU check, tools/gpu-check/resnet50_torch.py (torchvision ResNet-50 v1.5, cudnn.benchmark, "
       f"synthetic inputs already on the GPU, CUDA-event timing, median) on {device}, PyTorch {res['torch']}, "
       f"cuDNN {res['cudnn'] // 10000}.{res['cudnn'] // 100 % 100}; output kept in {rel}/resnet50.json")
cnn, vis, tr = [], [], []
for r in res["results"]:
    cl, p = r["channels_last"], r["precision"]
    if r["kind"] == "train":
        prec = {"fp32": "fp32", "fp16": "amp-fp16", "bf16": "amp-bf16"}[p]
        fit = fit_pair and p == "fp16"
        comment = "   # kTransposeBytesPerElement (models/cnn.hpp) was chosen on the NCHW / channels-last pair" if fit else ""
        how = ("fp32 weights and activations, TF32 convolutions (PyTorch default allow_tf32)" if p == "fp32"
               else f"autocast {p}" + (" with GradScaler" if p == "fp16" else ""))
        cnn.append(f'''  - id: "rn50-{gpu}-{prec}-{'nhwc' if cl else 'nchw'}-b256-here"
    source: "{src}"
    where: "results[] entry kind train, batch 256, precision {p}, channels_last {str(cl).lower()}: images_per_s (median of 30 steps after 15 warm-up; min {256 / r['step_max_s']:.0f}, max {256 / r['step_min_s']:.0f})"
    as_of: "2026-11"
    group: measured-here
    fit: {'true' if fit else 'false'}{comment}
    model: "resnet50"
    gpu: "{gpu}"
    gpus: 1
    precision: "{prec}"
    batch_per_gpu: 256
    framework: "pytorch"
    channels_last: {str(cl).lower()}
    data: "synthetic"
    measured: {{images_per_s: {r['images_per_s']:.0f}, per: "gpu"}}
    note: "SGD with momentum and weight decay; {how}; step = zero_grad, forward, loss, backward, optimizer step."''')
    else:
        half = (", weights and inputs converted to fp16 (no autocast, so no per-layer casts; the framework engine "
                "profile assumes autocast)") if p == "fp16" else ""
        vis.append(f'''  - id: "rn50-{gpu}-pt-{p}-b{r['batch']}-here"
    source: "{src}"
    where: "results[] entry kind inference, batch {r['batch']}, precision {p}, channels_last {str(cl).lower()}: latency_s (median of {50 if r['batch'] <= 8 else 20} calls after 20 warm-up) in ms"
    as_of: "2026-11"
    group: measured-here
    fit: false
    model: "resnet50"
    gpu: "{gpu}"
    gpus: 1
    engine: "framework"
    framework: "pytorch"
    precision: "{p}"
    channels_last: {str(cl).lower()}
    batch: {r['batch']}
    measured: {{images_per_s: {r['images_per_s']:.0f}, latency_ms: {r['latency_s'] * 1e3:.3f}}}
    latency_stat: "median"
    note: "model.eval() under torch.inference_mode(){half}; one forward per call, timed on the GPU."''')
steps = [(s, "transformer.json") for s in tf["steps"]]
# transformer_torch.py --recompute --no-sustained, run later: its full-recompute steps (the
# run's no-recompute steps repeat transformer.json's and are its same-run baseline).
rec_path = os.path.join(out_dir, "transformer-recompute.json")
if os.path.exists(rec_path):
    rec = json.load(open(rec_path))
    base = {s["compiled"]: s for s in rec["steps"] if s.get("recompute", "none") == "none"}
    steps += [(dict(s, baseline=base.get(s["compiled"])), "transformer-recompute.json")
              for s in rec["steps"] if s.get("recompute") == "full"]
for s, file in steps:
    full = s.get("recompute", "none") == "full"
    mode = "compile" if s["compiled"] else "eager"
    recompute_note = ""
    if full:
        b = s.get("baseline")
        recompute_note = (" Full activation checkpointing: each block under torch.utils.checkpoint(use_reentrant=False)."
                          + (f" The same run without it: {b['tokens_per_s']:.0f} tokens/s ({b['step_s'] * 1e3:.1f} ms)." if b else ""))
    tr.append(f'''  - id: llama3-8b-4-layers-{gpu}-1g-{mode}{'-recompute' if full else ''}-here
    source: "capsim GPU check, tools/gpu-check/transformer_torch.py on {device}, PyTorch {tf['torch']}; output kept in {rel}/{file}"
    where: "steps[] entry compiled {str(s['compiled']).lower()}{', recompute full' if full else ''}: tokens_per_s = 2 x 4096 / median step time of 10 after 4 warm-up ({s['step_s'] * 1e3:.1f} ms; min {s['step_min_s'] * 1e3:.1f}, max {s['step_max_s'] * 1e3:.1f})"
    as_of: "2026-11"
    group: measured-here
    fit: false
    model:
      name: llama-3-8b-4-layers
      layers: 4
      hidden: 4096
      heads: 32
      kv_heads: 8
      ffn_hidden: 14336
      gated_mlp: true
      vocab: 128256
    seq_len: 4096
    global_batch: 2
    micro_batch: 2
    precision: bf16
    attention: flash2
    kernels: {'fused' if s['compiled'] else 'eager'}
    hardware:
      gpu: {gpu}
      gpus: 1
      gpus_per_node: 8
      intra_node: nvswitch-h100
      inter_node: "8 x ib-ndr-400"
    layout: {{tp: 1, pp: 1, dp: 1, recompute: {'full' if full else 'none'}}}
    measured:
      metric: tokens_per_s_per_gpu
      value: {s['tokens_per_s']:.0f}
    note: "torch.nn.RMSNorm, one fused QKV and one gate+up linear, F.scaled_dot_product_attention (causal, GQA), SwiGLU, untied embedding and output head; fp32 weights under bf16 autocast, fp32 cross-entropy, fused AdamW. {'torch.compile (default mode) on the model' if s['compiled'] else 'Eager'}. {s['params'] / 1e9:.2f} B parameters; SM clock {s['sm_mhz']} MHz at {s['power_w']:.0f} W when read after the timed steps. The model is cut to 4 layers to fit one GPU without sharding; the step's shapes are Llama 3 8B's.{recompute_note}"''')
print("# cnn-training\n" + "\n".join(cnn) + "\n# vision-inference\n" + "\n".join(vis) + "\n# training\n" + "\n".join(tr))
