#!/usr/bin/env python3
"""Issue 6's table in one run on a CUDA machine: vkinfer (Vulkan) against PyTorch's strongest
peers on the same GPU, host input to host output, median ms of --runs after --warmup:
PyTorch CUDA eager fp32 and fp16, a CUDA graph of the fp32 model captured once and replayed
(input copied into its static buffer, output copied out), and
torch.compile(mode="reduce-overhead") fp32 (Inductor's kernels replayed through CUDA graphs;
its compile time is not counted). TF32 is off. vkinfer's output is checked against eager fp32.

    python3 bench/peers/gpu_peers.py VKINFER [--models mobilenet_v2_b1,...] [--runs 50] [--warmup 10]
        [--no-compile] [--cpu-peers THREADS] [--ncnn] [--half] [--markdown OUT.md]

Models (seeded random weights, exported by the TorchScript exporter at opset 17):
torchvision's mobilenet_v2, resnet18, resnet50, efficientnet_b0, convnext_tiny, vit_b_16 at
batch 1 (and resnet50 at 32), a BERT-base-sized encoder (seq 128) at batch 1 and 8, and the
policy-shaped test networks (tests/models/policies.py) at batch 1.
--cpu-peers N adds onnxruntime CPU (on the same .onnx file) and PyTorch CPU eager with N threads
(at most 10 runs after 2: they are 10-100x slower). --ncnn adds ncnn through Vulkan on the same
GPU for the torchvision CNNs at batch 1 (its PyPI wheel, with pnnx converting each model; both
importable, e.g. carried as wheels): in fp32 (fp16 storage and arithmetic off) and in its
defaults (fp16 storage and arithmetic: its fastest mode), each in a child process, so that a
crash in ncnn or pnnx is a cell of the table; its outputs are checked against eager fp32
(pnnx stores the weights as float16, so ~1e-3 relative in both modes). --half adds vkinfer's fp16
mode (`--precision fp16`) on the same models, the like-for-like peer of ncnn's fp16; "vkinfer /
best ncnn" is the faster of vkinfer's columns over the faster of ncnn's. LeRobot's own policies:
bench/peers/lerobot_policies.py; both in one command: bench/peers/issue6_table.sh."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "models"))
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
    if base.startswith("vit"):  # torchvision zeroes ViT's head: its output would be the zero bias
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)
        torch.nn.init.normal_(model.heads.head.bias, std=0.02)
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


def cpu_peers(model, inputs, path, names, threads, runs):
    """onnxruntime CPU on the .onnx file and PyTorch CPU eager, `threads` threads each: ms."""
    out = {}
    runs = min(runs, 10)
    try:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        feed = {n: t.numpy() for n, t in zip(names, inputs)}
        out[f"onnxruntime CPU ({threads} threads)"] = median_ms(lambda: sess.run(None, feed), runs, 2)
    except Exception as err:  # noqa: BLE001  no onnxruntime there: the cell stays empty
        print(f"  onnxruntime: {type(err).__name__}: {err}".splitlines()[0], flush=True)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    with torch.no_grad():
        out[f"PyTorch CPU ({threads} threads)"] = median_ms(lambda: model(*inputs), runs, 2)
    torch.set_num_threads(before)
    return out


def is_cnn(name):
    """the torchvision CNNs at batch 1: what ncnn's converter and its batch-less Mat take"""
    base, batch = name.rsplit("_b", 1)
    return batch == "1" and base in ("mobilenet_v2", "resnet18", "resnet50", "efficientnet_b0", "convnext_tiny")


def ncnn_in_child(name, tmp, half, runs, warmup):
    """ncnn through Vulkan on model `name` in a child process (this script with --ncnn-child):
    (ms, relative error against PyTorch), or a string saying how it failed (a crash included)."""
    from compare_cpu import child_result
    cmd = [sys.executable, os.path.abspath(__file__), "--ncnn-child", name, tmp, str(int(half)), str(runs), str(warmup)]
    return child_result(cmd, 600)


def ncnn_child(argv):
    """--ncnn-child NAME TMP HALF RUNS WARMUP: one ncnn measurement, as JSON"""
    from compare_cpu import ncnn_time
    name, tmp, half, runs, warmup = argv
    model, x = build(name)
    model.eval()
    try:
        ms, err = ncnn_time(model, (x,), tmp, name, os.cpu_count() or 1, True, int(runs), int(warmup), half == "1")
        print(json.dumps({"ms": ms, "err": err}))
    except Exception as e:  # noqa: BLE001  reported by the parent
        text = str(e).strip()
        print(json.dumps({"error": text.splitlines()[0] if text else type(e).__name__}))
    return 0


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


def vkinfer_output(vkinfer, path, feeds, tmp, extra=()):
    out = os.path.join(tmp, "out")
    cmd = [vkinfer, "run", path, "--output-dir", out, *extra]
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
    ap.add_argument("--cpu-peers", type=int, default=0, metavar="THREADS",
                    help="onnxruntime CPU and PyTorch CPU with THREADS threads (0: not run)")
    ap.add_argument("--ncnn", action="store_true", help="ncnn through Vulkan on the CNNs at batch 1")
    ap.add_argument("--half", action="store_true", help="vkinfer's fp16 mode too, on the CNNs at batch 1")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    cols = ["vkinfer", "eager fp32", "CUDA graph fp32", "torch.compile fp32", "eager fp16"]
    if a.half:
        cols.insert(1, "vkinfer fp16")
    if a.cpu_peers:
        cols += [f"onnxruntime CPU ({a.cpu_peers} threads)", f"PyTorch CPU ({a.cpu_peers} threads)"]
    if a.ncnn:
        cols += ["ncnn Vulkan fp32", "ncnn Vulkan fp16"]
    tail = ["vkinfer / best fp32 peer"] + (["vkinfer / best ncnn"] if a.ncnn else []) + ["max rel. err", "dispatches"]
    lines = ["| model | batch | " + " | ".join(cols + tail) + " |", "|---" * (len(cols) + len(tail) + 2) + "|"]
    notes = []
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
            row = {"vkinfer": vk}
            if a.half and is_cnn(name):
                row["vkinfer fp16"], _ = vkinfer_time(a.vkinfer, path, feeds, a.runs, a.warmup, ["--precision", "fp16"])
                e16 = rel_err(vkinfer_output(a.vkinfer, path, feeds, tmp, ["--precision", "fp16"]), ref)
                notes.append(f"{name}: vkinfer fp16's max relative error against eager fp32 {e16:.1e}")
            if a.cpu_peers:
                row.update(cpu_peers(model, inputs, path, names, a.cpu_peers, a.runs))
            if a.ncnn and is_cnn(name):
                for mode in ("fp32", "fp16"):
                    r = ncnn_in_child(name, tmp, mode == "fp16", a.runs, a.warmup)
                    if isinstance(r, tuple):
                        row[f"ncnn Vulkan {mode}"] = r[0]
                        if r[1] > 1e-2:
                            notes.append(f"{name}: ncnn {mode}'s output differs from eager by {r[1]:.1e} (relative)")
                            row[f"ncnn Vulkan {mode}"] = None
                    else:
                        notes.append(f"{name}: ncnn {mode} did not run: {r}")
        err = rel_err(got, ref)
        peers = torch_peers(model, inputs, a.runs, a.warmup, not a.no_compile) if torch.cuda.is_available() else {}
        row.update(peers)
        fp32 = [row[k] for k in ("eager fp32", "CUDA graph fp32", "torch.compile fp32") if row.get(k)]
        extra = [f"{vk / min(fp32):.2f}x" if vk and fp32 else "-"]
        if a.ncnn:
            nc = [row[k] for k in ("ncnn Vulkan fp32", "ncnn Vulkan fp16") if row.get(k)]
            ours = [row[k] for k in ("vkinfer", "vkinfer fp16") if row.get(k)]
            extra.append(f"{min(ours) / min(nc):.2f}x" if ours and nc else "-")
        base, batch = name.rsplit("_b", 1)
        cells = [f"{row[c]:.2f}" if row.get(c) else "-" for c in cols]
        lines.append(f"| {base} | {batch} | " + " | ".join(cells + extra) + f" | {err:.1e} | {dispatches or '-'} |")
        print(lines[-1], flush=True)
    if notes:
        lines += [""] + [f"- {n}" for n in notes]
    write_table(lines, a.markdown)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--ncnn-child":
        sys.exit(ncnn_child(sys.argv[2:]))
    main()
