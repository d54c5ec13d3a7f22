"""ResNet-50 training and inference throughput in eager PyTorch on one GPU, synthetic data.

Checks capsim's CNN model against a real GPU: the same network (torchvision ResNet-50 v1.5),
the framework's own kernels (cuDNN with benchmark autotuning), SGD with momentum, synthetic
ImageNet-sized inputs already on the GPU (no data loader). Prints one JSON object with the
device, the software versions and, per configuration, the median of the timed iterations.

  python3 tools/gpu-check/resnet50_torch.py > resnet50.json
"""
import json
import sys
import time

import torch
import torchvision

from gpu_timing import timed

torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True  # PyTorch's default for convolutions


def train(batch, precision, channels_last):
    model = torchvision.models.resnet50().cuda()
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    model = model.to(memory_format=fmt)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-5)
    x = torch.randn(batch, 3, 224, 224, device="cuda").to(memory_format=fmt)
    y = torch.randint(0, 1000, (batch,), device="cuda")
    loss_fn = torch.nn.CrossEntropyLoss()
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision)
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "fp16")

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    med, lo, hi = timed(step, 15, 30)
    del model, opt, x
    torch.cuda.empty_cache()
    return {"kind": "train", "batch": batch, "precision": precision, "channels_last": channels_last,
            "step_s": med, "step_min_s": lo, "step_max_s": hi, "images_per_s": batch / med}


def infer(batch, precision, channels_last):
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[precision]
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    model = torchvision.models.resnet50().cuda().eval().to(dtype=dtype, memory_format=fmt)
    x = torch.randn(batch, 3, 224, 224, device="cuda", dtype=dtype).to(memory_format=fmt)

    def step():
        with torch.inference_mode():
            model(x)

    med, lo, hi = timed(step, 20, 50 if batch <= 8 else 20)
    del model, x
    torch.cuda.empty_cache()
    return {"kind": "inference", "batch": batch, "precision": precision, "channels_last": channels_last,
            "latency_s": med, "latency_min_s": lo, "latency_max_s": hi, "images_per_s": batch / med}


def main():
    props = torch.cuda.get_device_properties(0)
    out = {"device": props.name, "sms": props.multi_processor_count, "memory_bytes": props.total_memory,
           "torch": torch.__version__, "torchvision": torchvision.__version__,
           "cudnn": torch.backends.cudnn.version(), "cuda": torch.version.cuda,
           "date": time.strftime("%Y-%m-%d"), "results": []}
    runs = [lambda: train(256, "fp32", False), lambda: train(256, "fp16", False),
            lambda: train(256, "fp16", True), lambda: train(256, "bf16", True),
            lambda: infer(1, "fp32", False), lambda: infer(1, "fp16", True),
            lambda: infer(256, "fp32", False), lambda: infer(256, "fp16", True)]
    for run in runs:
        try:
            out["results"].append(run())
        except Exception as e:  # noqa: BLE001 - report and go on with the next configuration
            out["results"].append({"error": repr(e)})
        print(json.dumps(out["results"][-1]), file=sys.stderr, flush=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
