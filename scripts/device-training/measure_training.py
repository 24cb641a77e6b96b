#!/usr/bin/env python3
"""Measures the MIG study's training workloads on a real GPU, read-only, to calibrate
data/workloads/mig-training.yaml: for each workload and batch size, steady training throughput
(samples/s), whole-GPU average power from NVML's energy counter, peak memory, and FLOPs per
sample counted by PyTorch's FLOP counter on one step. It never changes clocks, power limits or
MIG mode. Needs PyTorch, torchvision, transformers and nvidia-ml-py (pynvml).

Usage: measure_training.py OUT.json [SECONDS_PER_CONFIG]
Writes OUT.json after every configuration, so a run stopped early keeps what it measured."""
import json
import sys
import time

import pynvml
import torch
import torchvision
from torch.utils.flop_counter import FlopCounterMode

OUT = sys.argv[1]
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0

# GPT-2 family sizes (n_embd, n_layer, n_head): the published 124M, 355M, 774M, 1.5B models.
GPT2_SIZES = {"gpt2-124m": (768, 12, 12), "gpt2-355m": (1024, 24, 16),
              "gpt2-774m": (1280, 36, 20), "gpt2-1.5b": (1600, 48, 25)}
IMAGE_MODELS = {"resnet50": (torchvision.models.resnet50, 224, "fc"),
                "densenet121": (torchvision.models.densenet121, 224, "classifier"),
                "inception-v3": (lambda: torchvision.models.inception_v3(
                    aux_logits=False, init_weights=False), 299, "fc"),
                "efficientnet-b0": (torchvision.models.efficientnet_b0, 224, "classifier"),
                "mobilenet-v2": (torchvision.models.mobilenet_v2, 224, "classifier")}


def energy_mj(handle):
    return pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)


def image_step(name, mode, batch):
    ctor, size, head = IMAGE_MODELS[name]
    model = ctor().cuda().to(memory_format=torch.channels_last).train()
    if mode == "finetune":  # a new classifier head trained on a frozen backbone
        for p in model.parameters():
            p.requires_grad_(False)
        for p in getattr(model, head).parameters():
            p.requires_grad_(True)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)
    x = torch.randn(batch, 3, size, size, device="cuda").to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (batch,), device="cuda")
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    n_params = sum(p.numel() for p in model.parameters())
    return step, n_params


def gpt2_step(name, mode, batch, seq):
    from transformers import GPT2Config, GPT2LMHeadModel
    n_embd, n_layer, n_head = GPT2_SIZES[name]
    config = GPT2Config(n_embd=n_embd, n_layer=n_layer, n_head=n_head, n_positions=1024)
    with torch.device("cuda"):
        model = GPT2LMHeadModel(config).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, config.vocab_size, (batch, seq), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step, sum(p.numel() for p in model.parameters())


def measure(handle, make_step, batch):
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    step, n_params = make_step()
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with FlopCounterMode(display=False) as counter:
        step()
    torch.cuda.synchronize()
    flops = counter.get_total_flops()
    iters, t0, e0 = 0, time.perf_counter(), energy_mj(handle)
    while True:
        step()
        iters += 1
        if iters % 4 == 0:
            torch.cuda.synchronize()
            if time.perf_counter() - t0 >= SECONDS:
                break
    t1, e1 = time.perf_counter(), energy_mj(handle)
    return {"batch": batch, "params": n_params, "flops_per_sample": flops / batch,
            "samples_per_s": iters * batch / (t1 - t0), "avg_power_w": (e1 - e0) / 1e3 / (t1 - t0),
            "peak_memory_bytes": torch.cuda.max_memory_allocated(), "seconds": t1 - t0,
            "iterations": iters}


def main():
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    torch.backends.cudnn.benchmark = True
    result = {"gpu": pynvml.nvmlDeviceGetName(handle),
              "driver": pynvml.nvmlSystemGetDriverVersion(),
              "torch": torch.__version__, "power_limit_w":
              pynvml.nvmlDeviceGetEnforcedPowerLimit(handle) / 1e3,
              "sm_count": torch.cuda.get_device_properties(0).multi_processor_count,
              "runs": []}
    try:
        result["mig_mode"] = pynvml.nvmlDeviceGetMigMode(handle)
    except pynvml.NVMLError as e:
        result["mig_mode"] = str(e)
    t0, e0 = time.perf_counter(), energy_mj(handle)
    time.sleep(3)
    result["idle_power_w"] = (energy_mj(handle) - e0) / 1e3 / (time.perf_counter() - t0)
    configs = []
    for name in IMAGE_MODELS:
        for mode in ("pretrain", "finetune"):
            for batch in (32, 128):
                configs.append((name, mode, batch, None))
    for name in GPT2_SIZES:
        for batch in ((2, 8) if name != "gpt2-1.5b" else (2, 4)):
            configs.append((name, "pretrain", batch, 1024))
        for batch in (2, 8):
            configs.append((name, "finetune", batch, 256))
    for name, mode, batch, seq in configs:
        entry = {"workload": name, "mode": mode, "seq": seq}
        try:
            if seq is None:
                entry.update(measure(handle, lambda: image_step(name, mode, batch), batch))
            else:
                entry.update(measure(handle, lambda: gpt2_step(name, mode, batch, seq), batch))
        except Exception as e:  # an OOM or a missing model is recorded, not fatal
            entry["error"] = f"{type(e).__name__}: {e}"[:300]
        torch.cuda.synchronize()
        print(json.dumps(entry), flush=True)
        result["runs"].append(entry)
        with open(OUT, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
