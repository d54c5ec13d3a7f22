"""GPU time of a step, as the GPU checks measure it: warm-up runs, then CUDA events around
each timed run (seconds: median, fastest, slowest); and the SM clock and power at a moment,
from NVML (empty where NVML is missing)."""
import statistics

import torch

try:
    import pynvml
    pynvml.nvmlInit()
    NVML = pynvml.nvmlDeviceGetHandleByIndex(0)
except Exception:  # noqa: BLE001 - clocks are optional
    NVML = None


def clocks():
    if NVML is None:
        return {}
    return {"sm_mhz": pynvml.nvmlDeviceGetClockInfo(NVML, pynvml.NVML_CLOCK_SM),
            "power_w": pynvml.nvmlDeviceGetPowerUsage(NVML) / 1e3}


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
