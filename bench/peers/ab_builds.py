#!/usr/bin/env python3
"""Two vkinfer builds side by side on the same models in one run: same plans (dispatch counts),
same results (outputs compared with each other and with PyTorch eager) and same speed (median
host-to-host ms, plan ms without a pipeline cache, the builds taking turns round after round so that drift of the machine falls
on both). For a change that must keep speed, such as a reorganisation of the source.

    python3 bench/peers/ab_builds.py VKINFER_A VKINFER_B [--models mobilenet_v2_b1,...]
        [--rounds 3] [--runs 50] [--warmup 10] [--args '--precision fp16'] [--markdown OUT.md]

Models: bench/peers/gpu_peers.py's (seeded random weights, TorchScript exporter at opset 17);
its default list. A command is split as a shell would, so `"env VKINFER_X=1 build/vkinfer"`
compares an option's two settings on one build. Prints a markdown table: model | dispatches A / B | plan ms A / B | median ms A / B
(the median over rounds of each round's median) | B / A | max|A - B| / max|eager|."""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import rel_err, write_table  # noqa: E402
from gpu_peers import DEFAULT, as_tuple, build, vkinfer_output  # noqa: E402
from torch_export import export_onnx  # noqa: E402  (gpu_peers puts tests/models on the path)


def bench(exe, path, feeds, runs, warmup, extra):
    """(median ms, dispatches, plan ms) of one `vkinfer bench` (no pipeline cache on disk, so
    that plan time includes making the pipelines); Nones where it fails."""
    cmd = [*exe, "bench", path, "--runs", str(runs), "--warmup", str(warmup), "--json", *extra]
    for k, p in feeds:
        cmd += ["--input", f"{k}={p}"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, VKINFER_CACHE_DIR=""))
    if r.returncode:
        print(r.stdout[-500:], r.stderr[-500:])
        return None, None, None
    j = json.loads(r.stdout.strip().splitlines()[-1])
    return j["median_ms"], j.get("dispatches"), j.get("plan_ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("vkinfer_a", help="the command (split as a shell would): a binary, or env NAME=V BINARY")
    ap.add_argument("vkinfer_b")
    ap.add_argument("--models", default=DEFAULT)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--args", default="", help="options for both builds' bench and run, e.g. '--precision fp16'")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    exes = {"a": shlex.split(args.vkinfer_a), "b": shlex.split(args.vkinfer_b)}
    lines = ["| model | dispatches A / B | plan ms A / B | median ms A | median ms B | B / A | "
             "max abs(A - B) / max abs(eager) |", "|---|---|---|---|---|---|---|"]
    for name in args.models.split(","):
        model, x = build(name)
        model = model.eval()
        inputs = as_tuple(x)
        with torch.no_grad():
            ref = as_tuple(model(*inputs))[0].numpy()
        # exported with autograd on: under no_grad an eval nn.TransformerEncoderLayer takes its fused
        # fast path (aten::_transformer_encoder_layer_fwd), which the TorchScript exporter refuses
        with tempfile.TemporaryDirectory() as tmp:
            names = [f"in{i}" for i in range(len(inputs))]
            path = os.path.join(tmp, f"{name}.onnx")
            export_onnx(model, inputs, path, names, ["out"], 17)
            feeds = []
            for k, t in zip(names, inputs):
                np.save(os.path.join(tmp, f"{k}.npy"), t.numpy())
                feeds.append((k, os.path.join(tmp, f"{k}.npy")))
            times, plans, disp = {"a": [], "b": []}, {"a": [], "b": []}, {}
            for _ in range(args.rounds):
                for key in ("a", "b"):
                    ms, d, plan = bench(exes[key], path, feeds, args.runs, args.warmup, shlex.split(args.args))
                    if ms is not None:
                        times[key].append(ms)
                        plans[key].append(plan)
                        disp[key] = d
            outs = []
            for key in ("a", "b"):
                wrapper = os.path.join(tmp, f"vk_{key}.sh")  # gpu_peers' vkinfer_output takes one executable
                with open(wrapper, "w") as f:
                    f.write("#!/bin/sh\nexec " + " ".join(shlex.quote(w) for w in exes[key]) + ' "$@"\n')
                os.chmod(wrapper, 0o755)
                outs.append(vkinfer_output(wrapper, path, feeds, os.path.join(tmp, key), shlex.split(args.args)))
        ma = statistics.median(times["a"]) if times["a"] else None
        mb = statistics.median(times["b"]) if times["b"] else None
        diff = (float(np.max(np.abs(outs[0].astype(np.float64) - outs[1]))) / max(float(np.max(np.abs(ref))), 1e-30)
                if outs[0] is not None and outs[1] is not None and outs[0].shape == outs[1].shape else float("inf"))
        errs = [rel_err(o, ref) for o in outs]
        fmt = lambda v: "failed" if v is None else f"{v:.3f}"  # noqa: E731
        ratio = f"{mb / ma:.3f}" if ma and mb else "-"
        plan = " / ".join(f"{statistics.median(plans[k]):.0f}" if plans[k] else "-" for k in ("a", "b"))
        lines.append(f"| {name} | {disp.get('a')} / {disp.get('b')} | {plan} | {fmt(ma)} | {fmt(mb)} | {ratio} | {diff:.2g} "
                     f"(vs eager {errs[0]:.2g} / {errs[1]:.2g}) |")
        print(lines[-1], flush=True)
    write_table(lines, args.markdown)


if __name__ == "__main__":
    main()
