"""LLM decode and prefill steps on one GPU in PyTorch, without an engine's host costs.

Checks the step model of capsim's LLM serving (models/src/serving_llm.cpp, llm_step: each
GEMM at the roofline of its FLOPs and weight bytes, attention's KV reads at 0.8 of HBM
bandwidth, the norms and the activation at HBM bandwidth) on a real GPU. Llama 3.1 8B's
shapes (32 layers, hidden 4,096, 32 query heads and 8 key/value heads of 128, SwiGLU
14,336, vocabulary 128,256), random bf16 weights, a contiguous bf16 KV cache.

Decode: B sequences of C cached tokens each take one step: per layer the RMS norm, the QKV
projection, the new K and V written at position C - 1, attention over the C keys, the output
projection, the norm, the gate/up projection, SiLU x up and the down projection; then the
final norm and the vocabulary projection of the B new tokens. Rotary embeddings are left
out (an element-wise pass over q and k). Attention runs three ways:
  bmm:  grouped-query attention as two batched matmuls (the 4 query heads of a group share
        one read of their key/value head) and a softmax;
  sdpa: F.scaled_dot_product_attention with enable_gqa (PyTorch picks the kernel);
  none: no attention (the KV write kept), so that attention's share can be read off.
Prefill: B prompts of P tokens, one forward, causal SDPA attention, no KV write.

Each step is captured in a CUDA graph and replayed (no per-kernel host cost): median of 20
replays after 5 warm-ups (gpu_timing.timed), with the SM clock and power after each point
(gpu_timing.clocks, NVML; the first H200 and the H100 runs in data/calibration read them from
nvidia-smi, decode-rerun.json is this version's). Prints one JSON object.

  python3 tools/gpu-check/decode_torch.py > decode.json
"""
import json
import sys
import time

import torch
import torch.nn.functional as F

from gpu_timing import clocks, timed

LAYERS, HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN, VOCAB = 32, 4096, 32, 8, 128, 14336, 128256
DT = torch.bfloat16
KV_BYTES_PER_TOKEN = LAYERS * 2 * KV_HEADS * HEAD_DIM * 2

DECODE = [(1, 512), (1, 8192), (16, 512), (16, 2048), (16, 8192), (64, 512), (64, 2048), (64, 8192),
          (256, 512), (256, 2048), (512, 512), (512, 1024)]
PREFILL = [(1, 128), (1, 512), (1, 2048), (1, 8192), (8, 2048)]


def make_weights():
    def rand(*shape):
        return torch.randn(*shape, device="cuda", dtype=DT) * 0.02

    ones = lambda: torch.ones(HIDDEN, device="cuda", dtype=DT)
    layers = [{"qkv": rand(HIDDEN, (HEADS + 2 * KV_HEADS) * HEAD_DIM), "o": rand(HEADS * HEAD_DIM, HIDDEN),
               "up": rand(HIDDEN, 2 * FFN), "down": rand(FFN, HIDDEN), "n1": ones(), "n2": ones()}
              for _ in range(LAYERS)]
    return layers, rand(HIDDEN, VOCAB), ones()


def norm(x, w):
    return F.rms_norm(x, (HIDDEN,), w, 1e-5)


def mlp(x, w):
    gate, up = (norm(x, w["n2"]) @ w["up"]).chunk(2, -1)
    return x + (F.silu(gate) * up) @ w["down"]


def decode_step(x, layers, head, final, caches, pos, attention):
    b = x.shape[0]
    for w, (kc, vc) in zip(layers, caches):
        q, k, v = (norm(x, w["n1"]) @ w["qkv"]).split([HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM], -1)
        kc[:, :, pos] = k.view(b, KV_HEADS, HEAD_DIM)
        vc[:, :, pos] = v.view(b, KV_HEADS, HEAD_DIM)
        if attention == "bmm":
            qg = q.view(b, KV_HEADS, HEADS // KV_HEADS, HEAD_DIM)
            scores = torch.matmul(qg, kc.transpose(-1, -2)) * HEAD_DIM ** -0.5
            a = torch.matmul(torch.softmax(scores.float(), -1).to(DT), vc).reshape(b, HEADS * HEAD_DIM)
        elif attention == "sdpa":
            a = F.scaled_dot_product_attention(q.view(b, HEADS, 1, HEAD_DIM), kc, vc,
                                               enable_gqa=True).reshape(b, HEADS * HEAD_DIM)
        else:
            a = q
        x = mlp(x + a @ w["o"], w)
    return norm(x, final) @ head


def prefill_step(x, layers, head, final, b, p):
    for w in layers:
        q, k, v = (norm(x, w["n1"]) @ w["qkv"]).split([HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM], -1)
        a = F.scaled_dot_product_attention(q.view(b, p, HEADS, HEAD_DIM).transpose(1, 2),
                                           k.view(b, p, KV_HEADS, HEAD_DIM).transpose(1, 2),
                                           v.view(b, p, KV_HEADS, HEAD_DIM).transpose(1, 2),
                                           is_causal=True, enable_gqa=True)
        x = mlp(x + a.transpose(1, 2).reshape(b * p, HEADS * HEAD_DIM) @ w["o"], w)
    # The engine samples each prompt's last token only.
    return norm(x.view(b, p, HIDDEN)[:, -1], final) @ head


def graphed(fn):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph


def measure(graph):
    med, lo, hi = timed(graph.replay, 5, 20)
    return {"median_ms": med * 1e3, "min_ms": lo * 1e3, "max_ms": hi * 1e3, **clocks()}


def main():
    props = torch.cuda.get_device_properties(0)
    out = {"device": props.name, "sms": props.multi_processor_count, "memory_gb": props.total_memory / 1e9,
           "torch": torch.__version__, "cuda": torch.version.cuda, "date": time.strftime("%Y-%m-%d"),
           "model": {"layers": LAYERS, "hidden": HIDDEN, "heads": HEADS, "kv_heads": KV_HEADS, "head_dim": HEAD_DIM,
                     "ffn_hidden": FFN, "vocab": VOCAB, "dtype": "bf16"},
           "decode": [], "prefill": []}
    torch.manual_seed(0)
    layers, head, final = make_weights()
    budget = torch.cuda.mem_get_info()[0] - 12e9
    for b, c in DECODE:
        if b * c * KV_BYTES_PER_TOKEN > budget:
            out["decode"].append({"batch": b, "context": c, "skipped": "KV cache larger than the free memory"})
            continue
        caches = [(torch.randn(b, KV_HEADS, c, HEAD_DIM, device="cuda", dtype=DT),
                   torch.randn(b, KV_HEADS, c, HEAD_DIM, device="cuda", dtype=DT)) for _ in range(LAYERS)]
        x = torch.randn(b, HIDDEN, device="cuda", dtype=DT)
        point = {"batch": b, "context": c}
        for attention in ("none", "bmm", "sdpa"):
            try:
                with torch.no_grad():
                    g = graphed(lambda: decode_step(x, layers, head, final, caches, c - 1, attention))
                    point[attention] = measure(g)
                del g
            except Exception as e:  # noqa: BLE001 -- record and go on
                point[attention] = {"error": str(e)[:300]}
        out["decode"].append(point)
        print(json.dumps(point), file=sys.stderr, flush=True)
        del caches
        torch.cuda.empty_cache()
    for b, p in PREFILL:
        x = torch.randn(b * p, HIDDEN, device="cuda", dtype=DT)
        point = {"batch": b, "prompt": p}
        try:
            with torch.no_grad():
                g = graphed(lambda: prefill_step(x, layers, head, final, b, p))
                point["sdpa"] = measure(g)
            del g
        except Exception as e:  # noqa: BLE001
            point["sdpa"] = {"error": str(e)[:300]}
        out["prefill"].append(point)
        print(json.dumps(point), file=sys.stderr, flush=True)
        torch.cuda.empty_cache()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
