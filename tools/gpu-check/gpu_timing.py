"""GPU time of a step, as both GPU checks measure it: warm-up runs, then CUDA events around
each timed run (seconds: median, fastest, slowest)."""
import statistics

import torch


def timed(step, warmup, iters):
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times), min(times), max(times)
