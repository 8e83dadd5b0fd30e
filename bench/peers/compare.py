"""Side-by-side benchmark: vkinfer (Vulkan) vs PyTorch eager (CUDA if present, and CPU) and
onnxruntime (CPU), on torchvision image models with seeded random weights, in one run on one
machine. Also checks vkinfer's outputs against PyTorch eager (correctness on that device).

    /usr/bin/python3 bench/peers/compare.py VKINFER [--models mobilenet_v2,resnet18] [--batches 1,32]
        [--runs 50] [--warmup 10] [--threads 16] [--markdown OUT.md] [--json OUT.json]

Every timing is the median of --runs whole inferences after --warmup, host input to host
output (vkinfer bench: upload + GPU + download; CUDA eager: copy in, forward, copy out,
synchronize)."""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "models"))
from parity import build, export  # noqa: E402  the same seeded models as the parity tests



def rel_err(got, ref):
    """max|got - ref| / max|ref|, or inf where got is missing or of another shape."""
    if got is None or got.shape != ref.shape:
        return float("inf")
    return float(np.max(np.abs(got.astype(np.float64) - ref)) / max(float(np.max(np.abs(ref))), 1e-30))


def write_table(lines, path):
    """Prints the markdown lines, and writes them to path where one is given."""
    text = "\n".join(lines)
    print(text)
    if path:
        with open(path, "w") as f:
            f.write(text + "\n")


def timed(fn, runs, warmup):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vkinfer")
    ap.add_argument("--models", default="mobilenet_v2,resnet18")
    ap.add_argument("--batches", default="1,32")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
    cuda = torch.cuda.is_available()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            model = build(name)
            for batch in [int(b) for b in args.batches.split(",")]:
                x = torch.from_numpy(np.random.default_rng(2).standard_normal((batch, 3, 224, 224), dtype=np.float32))
                path = os.path.join(tmp, f"{name}_b{batch}.onnx")
                export(model, x, path)
                np.save(os.path.join(tmp, "x.npy"), x.numpy())
                row = {"model": name, "batch": batch}
                with torch.no_grad():
                    ref = model(x).numpy()
                    row["torch_cpu_ms"] = timed(lambda: model(x), args.runs, args.warmup)
                    if cuda:
                        gm = build(name).cuda()
                        row["torch_cuda_ms"] = timed(lambda: (gm(x.cuda()).cpu(), torch.cuda.synchronize()),
                                                     args.runs, args.warmup)
                        row["cuda_device"] = torch.cuda.get_device_name()
                        del gm
                if ort is not None:
                    so = ort.SessionOptions()
                    so.intra_op_num_threads = args.threads
                    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
                    feed = {"input": x.numpy()}
                    row["ort_cpu_ms"] = timed(lambda: sess.run(None, feed), args.runs, args.warmup)
                out = os.path.join(tmp, "out")
                run = subprocess.run([args.vkinfer, "run", path, "--input", "input=" + os.path.join(tmp, "x.npy"),
                                      "--output-dir", out], capture_output=True, text=True)
                if run.returncode != 0:
                    row["vkinfer_error"] = (run.stderr or run.stdout).strip()[-500:]
                    print(f"{name} b{batch}: vkinfer run failed: {row['vkinfer_error']}", file=sys.stderr)
                else:
                    got = np.load(os.path.join(out, "logits.npy"))
                    row["max_abs_err"] = float(np.max(np.abs(got.astype(np.float64) - ref)))
                    row["max_abs_ref"] = float(np.max(np.abs(ref)))
                    row["parity_ok"] = row["max_abs_err"] <= 1e-4 * row["max_abs_ref"] + 1e-5
                    bench = subprocess.run([args.vkinfer, "bench", path, "--input", "input=" + os.path.join(tmp, "x.npy"),
                                            "--runs", str(args.runs), "--warmup", str(args.warmup), "--json", "--profile"],
                                           capture_output=True, text=True)
                    if bench.returncode == 0:
                        b = json.loads(bench.stdout.strip().splitlines()[-1])
                        row.update({"vkinfer_ms": b["median_ms"], "vkinfer_p10_ms": b["p10_ms"], "vkinfer_p90_ms": b["p90_ms"],
                                    "vkinfer_plan_ms": b["plan_ms"], "vkinfer_device": b["device"],
                                    "dispatches": b["dispatches"], "vkinfer_gpu_ms": b.get("gpu_total_ms")})
                    else:
                        row["vkinfer_error"] = bench.stderr.strip()[-500:]
                rows.append(row)
                print(json.dumps(row), flush=True)
    lines = [f"Machine: {platform.node()}, {os.cpu_count()} CPU cores; torch {torch.__version__}"
             + (f", onnxruntime {ort.__version__}" if ort else "") + f"; {args.threads} CPU threads; median of {args.runs} runs after {args.warmup} warm-up.",
             "",
             "| model | batch | vkinfer (Vulkan) ms | of which GPU ms | PyTorch CUDA ms | PyTorch CPU ms | onnxruntime CPU ms | vkinfer / CUDA | vkinfer / CPU | max abs err vs eager |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        def f(k):
            return f"{r[k]:.2f}" if k in r else "-"
        ratio_cuda = f"{r['vkinfer_ms'] / r['torch_cuda_ms']:.2f}x" if "vkinfer_ms" in r and "torch_cuda_ms" in r else "-"
        ratio_cpu = f"{r['vkinfer_ms'] / r['torch_cpu_ms']:.2f}x" if "vkinfer_ms" in r else "-"
        err = f"{r['max_abs_err']:.2e} ({'ok' if r['parity_ok'] else 'FAIL'})" if "max_abs_err" in r else r.get("vkinfer_error", "-")[:80]
        lines.append(f"| {r['model']} | {r['batch']} | {f('vkinfer_ms')} | {f('vkinfer_gpu_ms')} | {f('torch_cuda_ms')} | {f('torch_cpu_ms')} | "
                     f"{f('ort_cpu_ms')} | {ratio_cuda} | {ratio_cpu} | {err} |")
    if rows and "vkinfer_device" in rows[0]:
        lines.insert(1, f"vkinfer device: {rows[0]['vkinfer_device']}" + (f"; CUDA device: {rows[0]['cuda_device']}" if "cuda_device" in rows[0] else ""))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        open(args.markdown, "w").write(text)
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)
    return 0 if all(r.get("parity_ok") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
