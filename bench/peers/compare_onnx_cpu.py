#!/usr/bin/env python3
"""Given .onnx files, side by side on one CPU machine: vkinfer on lavapipe (with --threads
lavapipe threads, twice as many, and --cpu-threads 0) against onnxruntime CPU with the same threads, and
vkinfer's outputs against onnxruntime's. For graphs made elsewhere (bench/peers/lerobot_policies.py
--graphs on a machine with a current torch, then bench/peers/onnx_weights.py fill here).

    /work/venv-ort/bin/python bench/peers/compare_onnx_cpu.py VKINFER DIR/NAME.onnx... [--threads 2]
        [--runs 10] [--warmup 2] [--rounds 2] [--markdown OUT.md]

NAME's inputs are DIR/NAME_in0.npy, DIR/NAME_in1.npy... fed as in0, in1...; times are medians of
--runs after --warmup, the median of --rounds alternating rounds."""
import argparse
import glob
import os
import platform
import statistics
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import rel_err, timed, write_table  # noqa: E402
from gpu_peers import vkinfer_output, vkinfer_time  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vkinfer")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--markdown")
    a = ap.parse_args()
    import onnxruntime as ort
    lines = [f"Machine: {platform.node()}, {os.cpu_count()} CPU cores, {a.threads} threads each; onnxruntime {ort.__version__}; "
             f"medians of {a.runs} runs after {a.warmup} warm-up, the median of {a.rounds} alternating rounds.", "",
             f"| graph | vkinfer ms ({a.threads} lavapipe threads) | vkinfer ms ({2 * a.threads} threads) "
             "| vkinfer ms (--cpu-threads 0) | onnxruntime ms "
             "| better vkinfer / onnxruntime | max rel. diff to onnxruntime | dispatches |", "|---" * 8 + "|"]
    for path in a.models:
        name = os.path.splitext(os.path.basename(path))[0]
        ins = sorted(glob.glob(os.path.join(os.path.dirname(path), name + "_in*.npy")))
        feeds = [(os.path.basename(p)[len(name) + 1:-4], p) for p in ins]
        arrays = {n: np.load(p) for n, p in feeds}
        so = ort.SessionOptions()
        so.intra_op_num_threads = a.threads
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        times = {"vk": [], "vk2x": [], "inline": [], "ort": []}
        dispatches = None
        for _ in range(a.rounds):
            for key, extra in (("vk", ["--cpu-threads", str(a.threads)]), ("vk2x", ["--cpu-threads", str(2 * a.threads)]),
                               ("inline", ["--cpu-threads", "0"])):
                ms, n = vkinfer_time(a.vkinfer, path, feeds, a.runs, a.warmup, extra)
                if ms is not None:
                    times[key].append(ms)
                    dispatches = n
            times["ort"].append(timed(lambda: sess.run(None, arrays), a.runs, a.warmup))
        with tempfile.TemporaryDirectory() as tmp:
            diff = rel_err(vkinfer_output(a.vkinfer, path, feeds, tmp), sess.run(None, arrays)[0])
        med = {k: statistics.median(v) if v else None for k, v in times.items()}
        best = min([v for v in (med["vk"], med["vk2x"], med["inline"]) if v] or [0])
        cell = lambda v: f"{v:.2f}" if v else "error"  # noqa: E731
        ratio = f"{best / med['ort']:.1f}x" if best else "-"
        lines.append(f"| {name} | {cell(med['vk'])} | {cell(med['vk2x'])} | {cell(med['inline'])} | {med['ort']:.2f} | {ratio} | "
                     f"{diff:.1e} | "
                     f"{dispatches or '-'} |")
        print(lines[-1], flush=True)
    write_table(lines, a.markdown)


if __name__ == "__main__":
    main()
