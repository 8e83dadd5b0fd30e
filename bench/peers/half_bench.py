"""Half precision side by side: vkinfer in float32, in the fp16 mode and on bfloat16 models,
against PyTorch eager on CUDA in float32 (TF32 off) and float16, in one run on one machine.

    /usr/bin/python3 bench/peers/half_bench.py VKINFER [--runs 50] [--warmup 10] [--markdown OUT.md]
        [--models resnet50_b32,bert_b8,policy_bf16_b8,bert_bf16_b8]

Timings are medians of --runs whole inferences after --warmup, host input to host output
(`vkinfer bench --json`; PyTorch: copy in, forward, copy out, synchronize). Each vkinfer
output is checked against PyTorch (float32 eager for the fp16 mode, bfloat16 eager for
bfloat16 models) and the relative error printed; weight bytes come from `vkinfer bench
--json`. Models have seeded random weights."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "models"))
from torch_export import export_onnx, randomize_batchnorm  # noqa: E402
from compare import write_table  # noqa: E402  (bench/peers/compare.py)


class Encoder(nn.Module):
    """BERT-base-sized: 12 layers, d 768, 12 heads, feed-forward 3072, GELU."""

    def __init__(self, layers=12):
        super().__init__()
        layer = nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0, batch_first=True, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


def build(name):
    torch.manual_seed(0)
    if name == "resnet50_b32":
        import torchvision
        return randomize_batchnorm(torchvision.models.resnet50()), torch.randn(32, 3, 224, 224), None
    if name == "bert_b8":
        return Encoder(), torch.randn(8, 128, 768), None
    if name == "bert_bf16_b8":  # the encoder as a bfloat16 model (tensor cores where bf16 ones exist)
        return Encoder(), torch.randn(8, 128, 768), torch.bfloat16
    if name == "policy_bf16_b8":
        from policies import Transformer
        return Transformer(), torch.randn(8, 10, 64), torch.bfloat16
    raise SystemExit(f"unknown model {name}")


def vkinfer_bench(vkinfer, path, x_path, flags, runs, warmup):
    cmd = [vkinfer, "bench", path, "--input", f"x={x_path}", "--runs", str(runs), "--warmup", str(warmup), "--json"] + flags
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        print(r.stdout, r.stderr)
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def vkinfer_output(vkinfer, path, x_path, flags, tmp):
    out = os.path.join(tmp, "out")
    r = subprocess.run([vkinfer, "run", path, "--input", f"x={x_path}", "--output-dir", out] + flags,
                       capture_output=True, text=True)
    if r.returncode:
        print(r.stdout, r.stderr)
        return None
    return np.load(os.path.join(out, "y.npy")).astype(np.float64)


def torch_time(model, x, dtype, runs, warmup):
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    m = model.to("cuda", dtype)
    host = x.to(dtype).pin_memory() if dtype != torch.bfloat16 else x.to(dtype)

    def once():
        with torch.no_grad():
            y = m(host.to("cuda", non_blocking=True))
            out = y.to("cpu")
        torch.cuda.synchronize()
        return out

    for _ in range(warmup):
        once()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        once()
        times.append((time.perf_counter() - t0) * 1e3)
    model.to("cpu", torch.float32)
    return statistics.median(times)


def rel_err(got, ref):
    if got is None or got.shape != ref.shape:
        return float("inf")
    return float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vkinfer")
    ap.add_argument("--models", default="resnet50_b32,bert_b8,policy_bf16_b8,bert_bf16_b8")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--markdown")
    ap.add_argument("--vkinfer-only", action="store_true", help="skip the PyTorch CUDA timings")
    ap.add_argument("--profile", action="store_true", help="also print `vkinfer bench --profile` for each vkinfer run")
    a = ap.parse_args()
    rows = []
    for name in a.models.split(","):
        model, x, native = build(name)
        model.eval()
        with torch.no_grad():
            ref32 = model(x).numpy().astype(np.float64)
        with tempfile.TemporaryDirectory() as tmp:
            p32, x_path = os.path.join(tmp, "m32.onnx"), os.path.join(tmp, "x.npy")
            export_onnx(model, (x,), p32, ["x"], ["y"], 17)
            np.save(x_path, x.numpy())
            runs = [("float32", p32, [], ref32)]
            if native is None:
                runs.append(("fp16 mode", p32, ["--precision", "fp16"], ref32))
            else:
                pb = os.path.join(tmp, "mbf16.onnx")
                mb = model.to(native)
                export_onnx(mb, (x.to(native),), pb, ["x"], ["y"], 17)
                with torch.no_grad():
                    refb = mb(x.to(native)).float().numpy().astype(np.float64)
                model.float()
                runs.append(("bfloat16 model", pb, [], refb))
            for label, path, flags, ref in runs:
                b = vkinfer_bench(a.vkinfer, path, x_path, flags, a.runs, a.warmup)
                if a.profile:
                    r = subprocess.run([a.vkinfer, "bench", path, "--input", f"x={x_path}", "--runs", "3", "--profile"]
                                       + flags, capture_output=True, text=True)
                    print(f"--- profile {name} {label}\n" + "\n".join(r.stdout.splitlines()[:40]), flush=True)
                err = rel_err(vkinfer_output(a.vkinfer, path, x_path, flags, tmp), ref)
                rows.append((name, f"vkinfer {label}", b["median_ms"] if b else float("nan"), err,
                             b["weight_bytes"] if b else 0, b["dispatches"] if b else 0))
                print(rows[-1], flush=True)
        for label, dt in (("PyTorch CUDA eager float32", torch.float32),
                          ("PyTorch CUDA eager " + ("bfloat16" if native else "float16"), native or torch.float16)):
            t = None if a.vkinfer_only else torch_time(model, x, dt, a.runs, a.warmup)
            if t is not None:
                rows.append((name, label, t, float("nan"), 0, 0))
                print(rows[-1], flush=True)
    lines = ["| model | runtime | median ms | max rel. error | weight MiB | dispatches |", "|---|---|---|---|---|---|"]
    for name, label, ms, err, wb, nd in rows:
        lines.append(f"| {name} | {label} | {ms:.2f} | {'' if err != err else f'{err:.2e}'} | "
                     f"{'' if not wb else f'{wb / 1048576:.1f}'} | {nd or ''} |")
    write_table(lines, a.markdown)


if __name__ == "__main__":
    main()
