"""16-bit Conv, ConvTranspose and pooling kernels: a small CNN (Conv+BatchNorm+Relu, depthwise,
1x1, strided, grouped, a split-K-sized 3x3, ConvTranspose2d, MaxPool, AvgPool, adaptive average
pool + Linear) and torchvision's resnet18, exported with PyTorch and run with `vkinfer run`.

    half_conv.py VKINFER CASE

CASE:
  fp16      the small CNN in the fp16 mode (--precision fp16) against PyTorch fp32 eager:
            max|err| <= 1e-2 * max|ref|; the conv and pool dispatches run their _f16 variants and
            the weights take about half the fp32 run's bytes
  bf16      the small CNN in bfloat16 against PyTorch bf16 eager on the CPU:
            max|err| <= 2^-6 * max|ref| (the error against fp32 is printed too)
  resnet18  torchvision resnet18 at batch 1 in the fp16 mode against fp32 eager (1e-2 relative),
            its convs in _f16 variants and its weight bytes about half of fp32's
VKINFER_CONV_KERNELS=gpu|cpu picks the conv kernel family (the ctest list runs both)."""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from torch_export import export_onnx, randomize_batchnorm

FAMILY_OPS = {"Conv", "ConvTranspose", "MaxPool", "AveragePool", "GlobalAveragePool"}
# VKINFER_DISABLE_FEATURES=storage16 (the packed path): the 32-bit kernels run, weights widen
PACKED = "storage16" in os.environ.get("VKINFER_DISABLE_FEATURES", "")


def wrong_variants(family, suffix):
    """Dispatches not in the variant the run should take (the plain kernels on the packed path)."""
    if PACKED:
        return [d for d in family if d[0].endswith(("_f16", "_bf16"))]
    return [d for d in family if not d[0].endswith(suffix)]


class BF16ConvTranspose(torch.autograd.Function):
    """A stride-s ConvTranspose2d on bf16 tensors: torch 1.13's CPU conv_transpose2d rejects bf16
    weights (it reads their layout as Conv's), so eager computes it in fp32 and rounds once to
    bf16 (as its bf16 convs do); the export is one plain bf16 ConvTranspose node."""

    @staticmethod
    def forward(ctx, x, w, b, stride):
        return F.conv_transpose2d(x.float(), w.float(), b.float(), stride=stride).to(x.dtype)

    @staticmethod
    def symbolic(g, x, w, b, stride):
        k = w.type().sizes()[2:]
        return g.op("ConvTranspose", x, w, b, strides_i=[stride, stride], kernel_shape_i=k)


class TransposeUp(nn.ConvTranspose2d):
    def forward(self, x):
        if x.dtype != torch.bfloat16:
            return super().forward(x)
        return BF16ConvTranspose.apply(x, self.weight, self.bias, self.stride[0])


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.depthwise = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1, groups=16), nn.ReLU6())
        self.pointwise = nn.Conv2d(16, 32, 1)  # a 1x1 conv over planes of whole vec4s
        self.strided = nn.Sequential(nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU())
        self.deep = nn.Conv2d(64, 64, 3, padding=1)  # K = 576 over 256 pixels: split-K on GPU kernels
        self.grouped = nn.Conv2d(64, 64, 3, padding=1, groups=4, bias=False)
        self.up = TransposeUp(64, 32, 2, stride=2)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.avgpool = nn.AvgPool2d(2)
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        h = self.pointwise(self.depthwise(self.stem(x)))
        h = self.grouped(self.deep(self.strided(h)))
        h = self.avgpool(self.maxpool(self.up(h)))
        return self.head(torch.flatten(F.adaptive_avg_pool2d(h, 1), 1))


def small_cnn():
    torch.manual_seed(0)
    return randomize_batchnorm(SmallCNN()).eval()


def vkinfer_run(vkinfer, path, x, tmp, precision):
    np.save(os.path.join(tmp, "in0.npy"), x.float().numpy())
    out = os.path.join(tmp, "out")
    cmd = [vkinfer, "run", path, "--input", "in0=" + os.path.join(tmp, "in0.npy"), "--output-dir", out]
    if precision:
        cmd += ["--precision", precision]
    run = subprocess.run(cmd, capture_output=True, text=True)
    print(run.stdout, run.stderr, sep="\n")
    return np.load(os.path.join(out, "out.npy")) if run.returncode == 0 else None


def bench(vkinfer, path, precision, profile, env_extra=None):
    """`vkinfer bench` once: (the JSON stats, the profile's dispatch lines (shader, op, node))."""
    cmd = [vkinfer, "bench", path, "--random-inputs", "--precision", precision, "--runs", "1", "--warmup", "0"]
    # the `vkinfer run` calls check validation; here it would only multiply resnet18's time
    env = {k: v for k, v in os.environ.items() if k != "VKINFER_VALIDATION"}
    env.update(env_extra or {})
    run = subprocess.run(cmd + ["--json"], capture_output=True, text=True, env=env)
    if run.returncode != 0:
        print(run.stdout, run.stderr, sep="\n")
        return None, None
    stats = json.loads(run.stdout.strip().splitlines()[-1])
    if not profile:
        return stats, []
    # every dispatch, not the slowest 15: which ones are slowest depends on the machine's load
    run = subprocess.run(cmd + ["--profile-all"], capture_output=True, text=True, env=env)
    print(run.stdout, run.stderr, sep="\n")
    lines = run.stdout.split("every dispatch, in recorded order:")[-1].strip().splitlines()
    return stats, [tuple(re.split(r"\s+", ln.strip(), maxsplit=5)[3:6]) for ln in lines if " ms " in ln]


def check_variants(vkinfer, path, want_family_dispatches):
    """The fp16 run's conv and pool dispatches are _f16 variants (every dispatch of the profile);
    weights about half of fp32's."""
    s16, dispatches = bench(vkinfer, path, "fp16", True)
    # (the fp32 run's convolutions as W holds them: Winograd's transformed 3x3 weights, which
    # CPU devices take in fp32, are 16/9 of W's bytes)
    s32, _ = bench(vkinfer, path, "fp32", False, {"VKINFER_CONV_WINOGRAD": "0"})
    if s16 is None or s32 is None:
        print("FAIL: vkinfer bench failed")
        return False
    family = [d for d in dispatches if d[1] in FAMILY_OPS and d[0] != "convert"]
    ratio = s16["weight_bytes"] / s32["weight_bytes"]
    print(f"fp16: {s16['dispatches']} dispatches, weights {s16['weight_bytes']} bytes; fp32: {s32['dispatches']} "
          f"dispatches, weights {s32['weight_bytes']} bytes (ratio {ratio:.3f}); family dispatches {family}")
    ok = True
    wrong = wrong_variants(family, "_f16")
    if wrong:
        print(f"FAIL: conv/pool dispatches not in their f16 variants: {wrong}")
        ok = False
    if not PACKED and len(family) < want_family_dispatches:
        print(f"FAIL: {len(family)} conv/pool dispatches listed, expected at least {want_family_dispatches}")
        ok = False
    if not PACKED and not 0.45 <= ratio <= 0.56:
        print(f"FAIL: the fp16 run's weights are {ratio:.3f} of fp32's, expected about half")
        ok = False
    return ok


def compare(name, got, ref, bound_rel):
    if got is None:
        print(f"FAIL {name}: vkinfer failed")
        return False
    if got.shape != ref.shape:
        print(f"FAIL {name}: shape {got.shape}, expected {ref.shape}")
        return False
    err = float(np.max(np.abs(got.astype(np.float64) - ref)))
    scale = float(np.max(np.abs(ref)))
    print(f"{name}: max abs error {err:.3g} (max |ref| {scale:.3g}, bound {bound_rel * scale:.3g}, relative {err / scale:.3g})")
    if not err <= bound_rel * scale:
        print(f"FAIL {name}")
        return False
    return True


def case_fp16(vkinfer, tmp):
    model = small_cnn()
    x = torch.from_numpy(np.random.default_rng(3).standard_normal((1, 3, 32, 32), dtype=np.float32))
    with torch.no_grad():
        ref = model(x).double().numpy()
    path = os.path.join(tmp, "small_cnn.onnx")
    export_onnx(model, (x,), path, ["in0"], ["out"], 17)
    ok = compare("small CNN fp16 mode vs fp32 eager", vkinfer_run(vkinfer, path, x, tmp, "fp16"), ref, 1e-2)
    # 7 convs and 3 pools; GPU kernels add split-K reduces
    return check_variants(vkinfer, path, 10) and ok


def case_bf16(vkinfer, tmp):
    model = small_cnn()
    x = torch.from_numpy(np.random.default_rng(3).standard_normal((1, 3, 32, 32), dtype=np.float32))
    with torch.no_grad():
        ref32 = model(x).double().numpy()
        model = model.to(torch.bfloat16)
        xb = x.to(torch.bfloat16)
        ref = model(xb).double().numpy()
    path = os.path.join(tmp, "small_cnn_bf16.onnx")
    export_onnx(model, (xb,), path, ["in0"], ["out"], 17)
    got = vkinfer_run(vkinfer, path, xb, tmp, None)
    if got is not None:
        err32 = float(np.max(np.abs(got.astype(np.float64) - ref32)))
        print(f"small CNN bf16 vs fp32 eager: max abs error {err32:.3g} (relative {err32 / np.max(np.abs(ref32)):.3g})")
    ok = compare("small CNN bf16 vs bf16 eager", got, ref, 2.0 ** -6)
    s, dispatches = bench(vkinfer, path, "fp32", True)
    family = [d for d in dispatches if d[1] in FAMILY_OPS and d[0] != "convert"]
    wrong = wrong_variants(family, "_bf16")
    if s is None or wrong or (not PACKED and len(family) < 10):
        print(f"FAIL: conv/pool dispatches of the bf16 model: {family}")
        ok = False
    return ok


def case_resnet18(vkinfer, tmp):
    import torchvision

    torch.manual_seed(0)
    model = randomize_batchnorm(torchvision.models.resnet18(weights=None)).eval()
    x = torch.from_numpy(np.random.default_rng(2).standard_normal((1, 3, 224, 224), dtype=np.float32))
    with torch.no_grad():
        ref = model(x).double().numpy()
    path = os.path.join(tmp, "resnet18.onnx")
    export_onnx(model, (x,), path, ["in0"], ["out"], 17)
    ok = compare("resnet18 fp16 mode vs fp32 eager", vkinfer_run(vkinfer, path, x, tmp, "fp16"), ref, 1e-2)
    return check_variants(vkinfer, path, 10) and ok


def main():
    vkinfer, case = sys.argv[1], sys.argv[2]
    cases = {"fp16": case_fp16, "bf16": case_bf16, "resnet18": case_resnet18}
    with tempfile.TemporaryDirectory() as tmp:
        ok = cases[case](vkinfer, tmp)
    print(("PASS " if ok else "FAIL ") + case)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
