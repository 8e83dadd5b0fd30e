"""Windowed dispatches: a small CNN (Conv, BatchNormalization, Relu, MaxPool, a residual Add,
GlobalAveragePool, Gemm, Softmax) at batch 8, run with `vkinfer run` twice: as is, and with
VKINFER_MAX_BINDING_BYTES low enough that its big activations exceed one binding and the ops
split their work into windows. Both runs must match PyTorch eager, and the windowed plan must
have more dispatches than the plain one (else nothing was windowed).

    windowed.py VKINFER [LIMIT_BYTES] [fp16]

Passes when max|vkinfer - eager| <= 1e-4 * max|eager| + 1e-5 in both runs (with fp16: both
runs in the fp16 execution mode, bound 1e-2 * max|eager|: halves split into windows too)."""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch

from torch_export import export_onnx, randomize_batchnorm

BATCH, CHANNELS, SIZE = 8, 16, 32
# one image of the first activations (16 x 32 x 32 floats) is 64 KiB: at this limit the first
# conv runs one image per dispatch and the later layers (16 x 16 x 16) four images per dispatch
DEFAULT_LIMIT = 64 * 1024


class Residual(torch.nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(c, c, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn = torch.nn.BatchNorm2d(c)  # after the Add, so the export keeps it (not fused into a Conv)

    def forward(self, x):
        y = self.conv2(torch.relu(self.conv1(x)))
        return torch.relu(self.bn(x + y))


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, CHANNELS, 3, padding=1)
        self.stem_bn = torch.nn.BatchNorm2d(CHANNELS)
        self.pool = torch.nn.MaxPool2d(2)
        self.block = Residual(CHANNELS)
        self.head_pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(CHANNELS, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.stem_bn(self.stem(x))))
        x = self.head_pool(self.block(x)).flatten(1)
        return torch.softmax(self.fc(x), dim=1)


def build():
    torch.manual_seed(0)
    return randomize_batchnorm(SmallCNN()).eval()


def run(vkinfer, model_path, input_path, out_dir, limit, extra):
    env = dict(os.environ)
    env.pop("VKINFER_MAX_BINDING_BYTES", None)
    if limit:
        env["VKINFER_MAX_BINDING_BYTES"] = str(limit)
    cmd = [vkinfer, "run", model_path, "--input", "input=" + input_path, "--output-dir", out_dir] + extra
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    print(f"--- vkinfer run (VKINFER_MAX_BINDING_BYTES={limit or 'unset'}) ---")
    print(proc.stdout, proc.stderr, sep="\n")
    if proc.returncode != 0:
        return None, None
    found = re.search(r"(\d+) dispatches", proc.stdout + proc.stderr)
    return np.load(os.path.join(out_dir, "probs.npy")), int(found.group(1)) if found else None


def main():
    vkinfer = sys.argv[1]
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else DEFAULT_LIMIT
    fp16 = len(sys.argv) > 3 and sys.argv[3] == "fp16"
    extra = ["--precision", "fp16"] if fp16 else []
    model = build()
    x = torch.from_numpy(np.random.default_rng(2).standard_normal((BATCH, 3, SIZE, SIZE), dtype=np.float32))
    with torch.no_grad():
        ref = model(x).numpy()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "small_cnn.onnx")
        export_onnx(model, x, path, ["input"], ["probs"], 13)
        import onnx  # noqa: E402 (only to show what the export produced)
        print("ops:", sorted({n.op_type for n in onnx.load(path).graph.node}))
        input_path = os.path.join(tmp, "input.npy")
        np.save(input_path, x.numpy())
        plain, plain_dispatches = run(vkinfer, path, input_path, os.path.join(tmp, "plain"), 0, extra)
        windowed, windowed_dispatches = run(vkinfer, path, input_path, os.path.join(tmp, "windowed"), limit, extra)
    if plain is None or windowed is None:
        print("FAIL: vkinfer failed")
        return 1
    print(f"dispatches: {plain_dispatches} plain, {windowed_dispatches} windowed (limit {limit} bytes)")
    ok = plain_dispatches is not None and windowed_dispatches is not None and windowed_dispatches > plain_dispatches
    if not ok:
        print("FAIL: the windowed plan does not have more dispatches; nothing was split")
    bound = (1e-2 if fp16 else 1e-4) * float(np.max(np.abs(ref))) + 1e-5
    for label, got in (("plain", plain), ("windowed", windowed)):
        if got.shape != ref.shape:
            print(f"FAIL {label}: shape {got.shape}, expected {ref.shape}")
            ok = False
            continue
        err = float(np.max(np.abs(got.astype(np.float64) - ref)))
        print(f"{label}: max abs error {err:.3g} (bound {bound:.3g})")
        ok = ok and err <= bound
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
