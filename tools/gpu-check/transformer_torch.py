"""Sustained GEMM clocks and a Llama-style training step on one GPU, in PyTorch.

Checks two assumptions of capsim's training model against a real GPU:
  1. sustained: an 8192^3 bf16 GEMM run back to back for 20 s, TFLOP/s and SM clock and
     power per second (does the power limit lower the clock under sustained tensor work?);
  2. step: a Llama-3-8B-shaped model cut to 4 layers (hidden 4096, 32 heads, 8 KV heads,
     SwiGLU 14336, vocab 128256), sequence 4096, micro-batch 2, bf16 autocast over fp32
     weights, fused AdamW; eager and torch.compile'd; median step time of 10 after warm-up;
  3. with --recompute, the same steps again with full activation checkpointing (each block
     under torch.utils.checkpoint, non-reentrant: its forward runs again in backward).
Prints one JSON object.

  python3 tools/gpu-check/transformer_torch.py [--recompute] [--no-sustained] > transformer.json
"""
import json
import sys
import time

import torch
import torch.nn.functional as F
import torch.utils.checkpoint

from gpu_timing import clocks, timed


def sustained(seconds=20.0, n=8192):
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    flops = 2.0 * n ** 3
    samples = []
    t_end = time.time() + seconds
    while time.time() < t_end:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(50):
            a @ b
        end.record()
        end.synchronize()
        samples.append({"t": seconds - (t_end - time.time()), "tflops": 50 * flops / (start.elapsed_time(end) / 1e3) / 1e12,
                        **clocks()})
    return samples


class Block(torch.nn.Module):
    def __init__(self, h=4096, heads=32, kv=8, ffn=14336):
        super().__init__()
        self.heads, self.kv, self.hd = heads, kv, h // heads
        self.n1 = torch.nn.RMSNorm(h)
        self.n2 = torch.nn.RMSNorm(h)
        self.qkv = torch.nn.Linear(h, (heads + 2 * kv) * self.hd, bias=False)
        self.o = torch.nn.Linear(heads * self.hd, h, bias=False)
        self.up = torch.nn.Linear(h, 2 * ffn, bias=False)
        self.down = torch.nn.Linear(ffn, h, bias=False)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.n1(x)).split([self.heads * self.hd, self.kv * self.hd, self.kv * self.hd], dim=-1)
        q = q.view(b, s, self.heads, self.hd).transpose(1, 2)
        k = k.view(b, s, self.kv, self.hd).transpose(1, 2)
        v = v.view(b, s, self.kv, self.hd).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, s, -1))
        g, u = self.up(self.n2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(g) * u)


class Model(torch.nn.Module):
    def __init__(self, layers=4, vocab=128256, h=4096, recompute=False):
        super().__init__()
        self.recompute = recompute
        self.emb = torch.nn.Embedding(vocab, h)
        self.blocks = torch.nn.ModuleList(Block(h) for _ in range(layers))
        self.norm = torch.nn.RMSNorm(h)
        self.head = torch.nn.Linear(h, vocab, bias=False)

    def forward(self, tokens):
        x = self.emb(tokens)
        for blk in self.blocks:
            x = torch.utils.checkpoint.checkpoint(blk, x, use_reentrant=False) if self.recompute else blk(x)
        return self.head(self.norm(x))


def step_time(compiled, batch=2, seq=4096, layers=4, recompute=False):
    torch.manual_seed(0)
    model = Model(layers, recompute=recompute).cuda()
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    fwd = torch.compile(model) if compiled else model
    tokens = torch.randint(0, 128256, (batch, seq), device="cuda")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = fwd(tokens)
        loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), tokens.view(-1))
        loss.backward()
        opt.step()

    med, lo, hi = timed(step, 4, 10)
    peak = torch.cuda.max_memory_allocated()
    del model, opt, fwd
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    return {"compiled": compiled, "recompute": "full" if recompute else "none", "batch": batch, "seq": seq, "layers": layers, "params": params,
            "step_s": med, "step_min_s": lo, "step_max_s": hi,
            "tokens_per_s": batch * seq / med, "peak_memory_bytes": peak, **clocks()}


def main():
    props = torch.cuda.get_device_properties(0)
    out = {"device": props.name, "torch": torch.__version__, "cuda": torch.version.cuda,
           "date": time.strftime("%Y-%m-%d"), "idle": clocks()}
    if "--no-sustained" not in sys.argv:
        out["sustained_bf16_8192"] = sustained()
        print("sustained done", file=sys.stderr, flush=True)
    out["steps"] = []
    for recompute in (False, True) if "--recompute" in sys.argv else (False,):
        for compiled in (False, True):
            try:
                out["steps"].append(step_time(compiled, recompute=recompute))
            except Exception as e:  # noqa: BLE001 - report and go on
                out["steps"].append({"compiled": compiled, "recompute": "full" if recompute else "none",
                                     "error": repr(e)})
            print(json.dumps(out["steps"][-1]), file=sys.stderr, flush=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
