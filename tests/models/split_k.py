"""Split K on the scalar MatMul kernels, finished in one dispatch (matmul_tiled_fixup*: the
last slice of each tile adds the slices up and resets its counter) or in a second pass
(matmul_splitk_reduce, VKINFER_MM_FIXUP=0). Products with few tiles and a long K, on the GPU
kernels (VKINFER_MATMUL_KERNELS=gpu): a Linear with bias and ReLU, a product of two batched
inputs (a counter per batch), an int32 product. For float32 and the fp16 mode:
(a) every run of one session, with new inputs each time, matches PyTorch (counters left at
    zero by each run: a stale counter would finish a tile before all its slices are in);
(b) the fixup kernel ran and no reduce pass did, and the reverse under VKINFER_MM_FIXUP=0;
(c) both give the same bits (the slices are added in the same order).

    split_k.py LIBVKINFER_SO VKINFER"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
os.environ["VKINFER_LIBRARY"] = sys.argv[1]
os.environ["VKINFER_MATMUL_KERNELS"] = "gpu"
import vkinfer  # noqa: E402
from torch_export import export_onnx  # noqa: E402

VKINFER = sys.argv[2]
failures = 0


def check(what, ok, detail=""):
    global failures
    print(("PASS " if ok else "FAIL ") + what + ("" if ok else f": {detail}"))
    failures += not ok


class Products(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(1024, 32)  # M=40, N=32, K=1024: one tile

    def forward(self, x, a, b, i, j):
        return torch.relu(self.lin(x)), a @ b, i @ j  # [3,40,1024] x [3,1024,40]: a tile per batch


def inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(40, 1024, generator=g), torch.randn(3, 40, 1024, generator=g),
            torch.randn(3, 1024, 40, generator=g), torch.randint(-8, 8, (24, 1024), generator=g, dtype=torch.int32),
            torch.randint(-8, 8, (1024, 16), generator=g, dtype=torch.int32))


def kernels(path, precision, env):
    run = subprocess.run([VKINFER, "bench", path, "--random-inputs", "--profile-all", "--runs", "1", "--warmup", "0",
                          "--precision", precision], capture_output=True, text=True, env=dict(os.environ, **env))
    return set(re.findall(r"\bmatmul_\w+", run.stdout)) if run.returncode == 0 else {"error: " + run.stderr[-200:]}


def main():
    torch.manual_seed(0)
    model = Products().eval()
    names = ["x", "a", "b", "i", "j"]
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad():
        path = os.path.join(tmp, "m.onnx")
        export_onnx(model, inputs(0), path, names, ["y0", "y1", "y2"], 17)
        for precision, bound in (("fp32", 1e-5), ("fp16", 1e-2)):
            got = {}
            for fixup in ("1", "0"):
                os.environ["VKINFER_MM_FIXUP"] = fixup
                s = vkinfer.Session(path, precision=precision)
                outs = []
                for seed in (1, 2, 3):
                    xs = inputs(seed)
                    ref = model(*xs)
                    out = s.run({n: t.numpy() for n, t in zip(names, xs)})
                    for k, r in enumerate(ref):
                        y, r = out[f"y{k}"], r.numpy()
                        if k == 2:
                            ok = y.dtype == r.dtype and np.array_equal(y, r)
                            detail = f"dtype {y.dtype}, max diff {np.max(np.abs(y.astype(np.int64) - r))}"
                        else:
                            err = float(np.max(np.abs(y - r)) / np.max(np.abs(r)))
                            ok, detail = err <= bound, f"max rel err {err:.3g} (bound {bound})"
                        check(f"{precision} fixup={fixup} run {seed} y{k}", ok, detail)
                    outs.append(out)
                got[fixup] = outs
                del s
            os.environ.pop("VKINFER_MM_FIXUP")
            same = all(np.array_equal(got["1"][r][k], got["0"][r][k]) for r in range(3) for k in ("y0", "y1", "y2"))
            check(f"{precision}: the one-dispatch and two-pass split K give the same bits", same)
            on, off = kernels(path, precision, {}), kernels(path, precision, {"VKINFER_MM_FIXUP": "0"})
            suffix = "_f16" if precision == "fp16" else ""
            check(f"{precision}: matmul_tiled_fixup{suffix} ran, no reduce pass ({sorted(on)})",
                  f"matmul_tiled_fixup{suffix}" in on and not any("splitk_reduce" in k for k in on))
            check(f"{precision}: VKINFER_MM_FIXUP=0 ran the reduce pass ({sorted(off)})",
                  any("splitk_reduce" in k for k in off) and not any("fixup" in k for k in off))
    print("PASS" if not failures else f"FAIL ({failures})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
