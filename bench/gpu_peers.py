#!/usr/bin/env python3
"""Issue 6's table in one run on a CUDA machine: vkinfer (Vulkan) against PyTorch's strongest
peers on the same GPU, host input to host output, median ms of --runs after --warmup:
PyTorch CUDA eager fp32 and fp16, a CUDA graph of the fp32 model captured once and replayed
(input copied into its static buffer, output copied out), and
torch.compile(mode="reduce-overhead") fp32 (Inductor's kernels replayed through CUDA graphs;
its compile time is not counted). TF32 is off. vkinfer's output is checked against eager fp32.

    python3 bench/gpu_peers.py VKINFER [--models mobilenet_v2_b1,...] [--runs 50] [--warmup 10]
        [--no-compile] [--markdown OUT.md]

Models (seeded random weights, exported by the TorchScript exporter at opset 17):
torchvision's mobilenet_v2, resnet18, resnet50, efficientnet_b0, convnext_tiny, vit_b_16 at
batch 1 (and resnet50 at 32), a BERT-base-sized encoder (seq 128) at batch 1 and 8, and the
policy-shaped test networks (tests/models/policies.py) at batch 1. Not here: ncnn (no wheel
on the GPU machine) and LeRobot's own policies (not installable there)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))
sys.path.insert(0, HERE)
from torch_export import export_onnx, randomize_batchnorm  # noqa: E402
from compare import rel_err, write_table, timed as median_ms  # noqa: E402  (median of timed runs after warm-up)

DEFAULT = ("mobilenet_v2_b1,resnet18_b1,resnet50_b1,resnet50_b32,efficientnet_b0_b1,convnext_tiny_b1,vit_b_16_b1,"
           "bert_b1,bert_b8,policy_transformer_b1,policy_unet_b1,policy_mlp_b1")


def build(name):
    """(model, example input) for a model name with its batch suffix."""
    torch.manual_seed(0)
    base, batch = name.rsplit("_b", 1)
    batch = int(batch)
    if base == "bert":
        from half_bench import Encoder
        return Encoder(), torch.randn(batch, 128, 768)
    if base.startswith("policy_"):  # the parity tests' networks and inputs, cut to `batch` rows
        import policies
        model, inputs = policies.case({"transformer": "transformer", "unet": "unet1d", "mlp": "mlp"}[base[7:]])
        return model, tuple(t[:batch] for t in inputs)
    import torchvision
    model = randomize_batchnorm(getattr(torchvision.models, base)(weights=None))
    return model, torch.randn(batch, 3, 224, 224)


def as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def eager_and_graph(m, host, runs, warmup):
    """CUDA eager and a CUDA graph of module m (on the GPU, in eval mode) on pinned host inputs:
    {"eager fp32": ms, "CUDA graph fp32": ms}, the graph's left out where capture fails."""
    out = {}

    def eager():
        with torch.no_grad():
            y = m(*[h.to("cuda", non_blocking=True) for h in host])
            r = y.to("cpu")
        torch.cuda.synchronize()
        return r
    out["eager fp32"] = median_ms(eager, runs, warmup)
    # a CUDA graph of the forward on static buffers
    try:
        static_in = [h.to("cuda") for h in host]
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.no_grad():
            for _ in range(3):
                m(*static_in)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g), torch.no_grad():
            static_out = m(*static_in)

        def graph():
            for d, h in zip(static_in, host):
                d.copy_(h, non_blocking=True)
            g.replay()
            r = static_out.to("cpu")
            torch.cuda.synchronize()
            return r
        out["CUDA graph fp32"] = median_ms(graph, runs, warmup)
    except Exception as err:  # noqa: BLE001  capture can fail on some models (host tensors in forward)
        print(f"  CUDA graph: {type(err).__name__}: {str(err).splitlines()[0][:160]}", flush=True)
    return out


def torch_peers(model, inputs, runs, warmup, compile_too):
    inputs = as_tuple(inputs)
    m = model.to("cuda").eval()
    host = [t.pin_memory() for t in inputs]
    out = eager_and_graph(m, host, runs, warmup)
    if compile_too:
        try:
            cm = torch.compile(m, mode="reduce-overhead")

            def compiled():
                with torch.no_grad():
                    y = cm(*[h.to("cuda", non_blocking=True) for h in host])
                    r = y.to("cpu")
                torch.cuda.synchronize()
                return r
            for _ in range(3):  # compile and capture, not timed
                compiled()
            out["torch.compile fp32"] = median_ms(compiled, runs, warmup)
        except Exception as err:  # noqa: BLE001  no compiler on the machine, or unsupported
            print(f"  torch.compile: {type(err).__name__}: {err}".splitlines()[0], flush=True)
    mh = m.half()
    host16 = [h.half() if h.is_floating_point() else h for h in host]

    def eager16():
        with torch.no_grad():
            y = mh(*[h.to("cuda", non_blocking=True) for h in host16])
            r = y.to("cpu")
        torch.cuda.synchronize()
        return r
    out["eager fp16"] = median_ms(eager16, runs, warmup)
    model.to("cpu", torch.float32)
    return out


def vkinfer_time(vkinfer, path, feeds, runs, warmup, extra=()):
    """(median ms, dispatches) of `vkinfer bench` with options `extra`; (None, None) where it fails."""
    cmd = [vkinfer, "bench", path, "--runs", str(runs), "--warmup", str(warmup), "--json", *extra]
    for k, p in feeds:
        cmd += ["--input", f"{k}={p}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        print(r.stdout[-500:], r.stderr[-500:])
        return None, None
    j = json.loads(r.stdout.strip().splitlines()[-1])
    return j["median_ms"], j.get("dispatches")


def vkinfer_output(vkinfer, path, feeds, tmp):
    out = os.path.join(tmp, "out")
    cmd = [vkinfer, "run", path, "--output-dir", out]
    for k, p in feeds:
        cmd += ["--input", f"{k}={p}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        return None
    return np.load(os.path.join(out, sorted(os.listdir(out))[0]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vkinfer")
    ap.add_argument("--models", default=DEFAULT)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    cols = ["vkinfer", "eager fp32", "CUDA graph fp32", "torch.compile fp32", "eager fp16"]
    lines = ["| model | batch | " + " | ".join(cols) + " | vkinfer / best fp32 peer | max rel. err | dispatches |",
             "|---" * (len(cols) + 5) + "|"]
    for name in a.models.split(","):
        model, inputs = build(name)
        model.eval()
        inputs = as_tuple(inputs)
        with torch.no_grad():
            ref = model(*inputs).numpy().astype(np.float64)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.onnx")
            names = [f"in{i}" for i in range(len(inputs))]
            export_onnx(model, inputs, path, names, ["out"], 17)
            feeds = []
            for n, t in zip(names, inputs):
                p = os.path.join(tmp, n + ".npy")
                np.save(p, t.numpy())
                feeds.append((n, p))
            vk, dispatches = vkinfer_time(a.vkinfer, path, feeds, a.runs, a.warmup)
            got = vkinfer_output(a.vkinfer, path, feeds, tmp)
        err = rel_err(got, ref)
        peers = torch_peers(model, inputs, a.runs, a.warmup, not a.no_compile) if torch.cuda.is_available() else {}
        row = {"vkinfer": vk, **peers}
        fp32 = [row[k] for k in ("eager fp32", "CUDA graph fp32", "torch.compile fp32") if row.get(k)]
        ratio = f"{vk / min(fp32):.2f}x" if vk and fp32 else "-"
        base, batch = name.rsplit("_b", 1)
        cells = [f"{row[c]:.2f}" if row.get(c) else "-" for c in cols]
        lines.append(f"| {base} | {batch} | " + " | ".join(cells) + f" | {ratio} | {err:.1e} | {dispatches or '-'} |")
        print(lines[-1], flush=True)
    write_table(lines, a.markdown)


if __name__ == "__main__":
    main()
