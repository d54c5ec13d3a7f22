#!/usr/bin/env python3
"""Writes the SYNTHETIC calibration profiles in this folder (for tests only; see README.md).

Every number is invented: GEMM throughputs follow the model's curve exactly,
  flops(m, n, k) = ceiling * prod_d d / (d + half),
so a test can predict the fitted curve and the model's step time by hand; the other figures
are round, plausible values. Run: python3 generate.py
"""
import json

SQUARE = [128, 256, 512, 1024, 2048, 4096, 8192, 16384]
SKINNY = [(16, 8192, 8192), (64, 8192, 8192), (8192, 8192, 128), (8192, 128, 8192), (8192, 1024, 8192)]


def stat(median, unit, spread=0.02):
    return {"median": median, "min": median * (1 - spread), "max": median * (1 + spread / 2),
            "q1": median * (1 - spread / 4), "q3": median * (1 + spread / 4), "unit": unit, "repeats": 20}


def gemm(precision, ceiling, half):
    out = []
    for m, n, k in [(d, d, d) for d in SQUARE] + SKINNY:
        flops = ceiling * m / (m + half) * n / (n + half) * k / (k + half)
        out.append({"kind": "gemm", "precision": precision, "m": m, "n": n, "k": k, **stat(flops, "FLOP/s")})
    return out


def profile(device, gpu_count, curves, triad, copy, h2d, d2h, pageable, p2p, p2p_latency, allreduce, allgather):
    ms = []
    for precision, (ceiling, half) in curves.items():
        ms += gemm(precision, ceiling, half)
    for size in [1 << 20, 16 << 20, 256 << 20, 1 << 30]:
        cached = 1.6 if size < (64 << 20) else 1.0  # inside L2: faster
        ms.append({"kind": "memory_copy", "bytes": 2 * size, **stat(copy * cached, "B/s")})
        ms.append({"kind": "triad", "bytes": 3 * size, **stat(triad * cached, "B/s")})
    for size in [4096, 1 << 20, 64 << 20, 1 << 30]:
        ramp = size / (size + 200e3)  # per-copy overhead at small sizes
        for pinned, (up, down) in [(True, (h2d, d2h)), (False, (pageable, pageable))]:
            ms.append({"kind": "h2d", "bytes": size, "pinned": pinned, **stat(up * ramp, "B/s")})
            ms.append({"kind": "d2h", "bytes": size, "pinned": pinned, **stat(down * ramp, "B/s")})
    if gpu_count > 1:
        for src, dst in [(0, 1), (1, 0)]:
            for size in [1 << 20, 256 << 20]:
                ms.append({"kind": "p2p", "src": src, "dst": dst, "bytes": size,
                           **stat(p2p * size / (size + 1e6), "B/s")})
            ms.append({"kind": "p2p", "src": src, "dst": dst, "bytes": 4, **stat(p2p_latency, "s")})
        for size in [1 << 20, 1 << 30]:
            ms.append({"kind": "allreduce", "ranks": gpu_count, "bytes": size,
                       **stat(allreduce * size / (size + 8e6), "B/s")})
            ms.append({"kind": "allgather", "ranks": gpu_count, "bytes": size,
                       **stat(allgather * size / (size + 8e6), "B/s")})
    ms.append({"kind": "launch_latency", "mode": "queued", **stat(2.5e-6, "s")})
    ms.append({"kind": "launch_latency", "mode": "round_trip", **stat(8e-6, "s")})
    return {"schema": "capsim-calibration/1", "synthetic": True, "device": device, "gpu_count": gpu_count,
            "driver_version": "13.0", "cuda_runtime_version": "13.0", "measured_at": "2025-01-01T00:00:00Z",
            "host": {"note": "SYNTHETIC: invented numbers for tests, not a measurement"}, "measurements": ms}


H100 = profile({"name": "NVIDIA H100 80GB HBM3", "memory_bytes": 85049802752, "sm_count": 132, "clock_mhz": 1980,
                "memory_clock_mhz": 2619, "bus_width_bits": 5120, "compute_capability": "9.0",
                "l2_cache_bytes": 52428800},
               8, {"fp32": (52e12, 64.0), "tf32": (400e12, 128.0), "bf16": (800e12, 128.0), "fp16": (800e12, 128.0),
                   "fp8": (1500e12, 160.0), "int8": (1400e12, 160.0)},
               triad=3.0e12, copy=2.9e12, h2d=50e9, d2h=52e9, pageable=20e9, p2p=370e9, p2p_latency=2.5e-6,
               allreduce=360e9, allgather=340e9)
A100 = profile({"name": "NVIDIA A100-SXM4-80GB", "memory_bytes": 85198045184, "sm_count": 108, "clock_mhz": 1410,
                "memory_clock_mhz": 1593, "bus_width_bits": 5120, "compute_capability": "8.0",
                "l2_cache_bytes": 41943040},
               1, {"fp32": (18.5e12, 48.0), "tf32": (140e12, 96.0), "bf16": (270e12, 96.0), "fp16": (275e12, 96.0),
                   "int8": (520e12, 128.0)},
               triad=1.7e12, copy=1.65e12, h2d=24e9, d2h=25e9, pageable=10e9, p2p=0, p2p_latency=0,
               allreduce=0, allgather=0)

for name, p in [("h100-sxm-80gb-synthetic.json", H100), ("a100-sxm-80gb-synthetic.json", A100)]:
    with open(name, "w") as f:
        json.dump(p, f, indent=1)
        f.write("\n")
