"""Model parity: build a torchvision model with seeded random weights, export it to ONNX with
PyTorch, run it with `vkinfer run`, and compare every output with PyTorch eager.

    parity.py VKINFER MODEL BATCH

Passes when max|vkinfer - eager| <= 1e-4 * max|eager| + 1e-5 for every output. Prints the
error either way. No model file is kept."""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torchvision

from torch_export import export_onnx, randomize_batchnorm


def build(name):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None)
    return randomize_batchnorm(model).eval()


def export(model, x, path):
    export_onnx(model, x, path, ["input"], ["logits"], 13)


def main():
    vkinfer, name, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    model = build(name)
    x = torch.from_numpy(np.random.default_rng(2).standard_normal((batch, 3, 224, 224), dtype=np.float32))
    with torch.no_grad():
        ref = model(x).numpy()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{name}.onnx")
        export(model, x, path)
        np.save(os.path.join(tmp, "input.npy"), x.numpy())
        out_dir = os.path.join(tmp, "out")
        cmd = [vkinfer, "run", path, "--input", "input=" + os.path.join(tmp, "input.npy"), "--output-dir", out_dir]
        run = subprocess.run(cmd, capture_output=True, text=True)
        print(run.stdout, run.stderr, sep="\n")
        if run.returncode != 0:
            print(f"FAIL {name} batch {batch}: vkinfer exited {run.returncode}")
            return 1
        got = np.load(os.path.join(out_dir, "logits.npy"))
    # both models have Conv followed by Relu/Clip: the conv kernels must absorb them
    fused = re.search(r"(\d+) fused into their producer", run.stdout)
    if not fused or int(fused.group(1)) == 0:
        print(f"FAIL {name} batch {batch}: no Relu/Clip was fused into its Conv")
        return 1
    print(f"{fused.group(1)} Relu/Clip nodes fused into their Conv")
    if got.shape != ref.shape:
        print(f"FAIL {name} batch {batch}: shape {got.shape}, expected {ref.shape}")
        return 1
    err = float(np.max(np.abs(got.astype(np.float64) - ref)))
    scale = float(np.max(np.abs(ref)))
    bound = 1e-4 * scale + 1e-5
    same_top1 = bool(np.all(got.argmax(1) == ref.argmax(1)))
    print(f"{name} batch {batch}: max abs error {err:.3g} (max |ref| {scale:.3g}, bound {bound:.3g}), "
          f"top-1 agrees: {same_top1}")
    if not err <= bound:
        print(f"FAIL {name} batch {batch}")
        return 1
    print(f"PASS {name} batch {batch}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
