"""Fused attention in PyTorch at long sequences: what F.scaled_dot_product_attention reaches.

Checks the FlashAttention efficiencies of capsim's training model (performance.hpp,
kFlashHopperFa2 and friends: forward and backward rates as fractions of the dense bf16 peak)
against a real GPU, for each SDPA backend PyTorch offers there (flash, cuDNN, efficient):
batch 1, 32 query heads of 128, 8 or 32 key/value heads, bf16, causal and full masks, query
and key lengths from 4,096 to 32,768 (one context-parallel rank's block of a long sequence).
FLOPs are counted as capsim counts them: forward 4 sq sk d h (half of it under a causal
mask), backward 2.5 times the forward. Median of 10 timed calls after 3 warm-up.
Prints one JSON object.

  python3 tools/gpu-check/attention_torch.py > attention.json
"""
import json
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from gpu_timing import timed

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}


def measure(backend, seq, causal, kv_heads, heads=32, dim=128):
    q = torch.randn(1, heads, seq, dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(1, kv_heads, seq, dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(1, kv_heads, seq, dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    grad = torch.randn(1, heads, seq, dim, device="cuda", dtype=torch.bfloat16)
    gqa = kv_heads != heads

    def fwd():
        with sdpa_kernel(BACKENDS[backend]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)

    def fwd_bwd():
        q.grad = k.grad = v.grad = None
        fwd().backward(grad)

    flops = 4.0 * seq * seq * dim * heads * (0.5 if causal else 1.0)
    f_med, _, _ = timed(fwd, 3, 10)
    fb_med, _, _ = timed(fwd_bwd, 3, 10)
    bwd = max(fb_med - f_med, 1e-9)
    return {"backend": backend, "seq": seq, "causal": causal, "heads": heads, "kv_heads": kv_heads, "head_dim": dim,
            "forward_s": f_med, "forward_backward_s": fb_med,
            "forward_tflops": flops / f_med / 1e12, "backward_tflops": 2.5 * flops / bwd / 1e12}


def main():
    props = torch.cuda.get_device_properties(0)
    out = {"device": props.name, "torch": torch.__version__, "cuda": torch.version.cuda,
           "cudnn": torch.backends.cudnn.version(), "date": time.strftime("%Y-%m-%d"), "results": []}
    for backend in BACKENDS:
        for seq in (4096, 16384, 32768):
            for causal in (True, False):
                for kv in (8, 32):
                    try:
                        r = measure(backend, seq, causal, kv)
                    except Exception as e:  # noqa: BLE001 - a backend may refuse a shape: report and go on
                        r = {"backend": backend, "seq": seq, "causal": causal, "kv_heads": kv, "error": repr(e)[:300]}
                    out["results"].append(r)
                    print(json.dumps(r), file=sys.stderr, flush=True)
                    torch.cuda.empty_cache()
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
