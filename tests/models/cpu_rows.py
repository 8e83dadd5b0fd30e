"""The CPU-device row kernels against PyTorch eager (or NumPy for the graphs PyTorch does not
export): softmax_cpu (Softmax and LogSoftmax, rows held in registers, rows too long for that,
rows of a length that is not a multiple of 4, an axis that is not the last, large magnitudes),
norm_rows_cpu_vec4 (LayerNormalization with and without B, the fused Add + LayerNorm,
InstanceNormalization, GroupNorm with its per-channel pairs, rows held in registers or not) and the fold of a constant scale after a
product into its alpha (and Gemm's beta). Each case also checks, from a profiled run, which
kernels ran, so that a case cannot pass on another path. Run with VKINFER_NORM_KERNELS=cpu
(the row kernels of CPU devices on any device); usage: cpu_rows.py VKINFER."""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.helper as oh
import onnx.numpy_helper
import torch
import torch.nn as nn

from torch_export import Fn, export_onnx, report


class AddNorm(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.ln = nn.LayerNorm(n)
        with torch.no_grad():
            self.ln.weight.copy_(torch.randn(n))
            self.ln.bias.copy_(torch.randn(n))

    def forward(self, a, b):
        return self.ln(a + b)


def r(*shape, scale=1.0, offset=0.0):
    return torch.randn(*shape) * scale + offset


def layer_norm_graph(path, shape, axis, with_bias, eps=1e-5):
    """A LayerNormalization node (opset 17) with a Scale and an optional B, both initializers;
    returns the NumPy reference function."""
    rng = np.random.default_rng(1)
    norm_shape = shape[axis:]
    scale = rng.standard_normal(norm_shape).astype(np.float32)
    bias = rng.standard_normal(norm_shape).astype(np.float32)
    inits = [onnx.numpy_helper.from_array(scale, "scale")] + ([onnx.numpy_helper.from_array(bias, "bias")] if with_bias else [])
    node = oh.make_node("LayerNormalization", ["in0", "scale"] + (["bias"] if with_bias else []), ["out"], axis=axis,
                        epsilon=eps)
    g = oh.make_graph([node], "g", [oh.make_tensor_value_info("in0", onnx.TensorProto.FLOAT, shape)],
                      [oh.make_tensor_value_info("out", onnx.TensorProto.FLOAT, shape)], inits)
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), path)

    def ref(x):
        x = x.astype(np.float64)
        axes = tuple(range(axis, x.ndim))
        mean = x.mean(axis=axes, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
        y = (x - mean) / np.sqrt(var + eps) * scale
        return y + bias if with_bias else y
    return ref


def cases():
    """(name, model or graph builder, inputs, kernels that must run, op types that must not
    have a dispatch of their own)"""
    sm, lsm = (lambda d: Fn(lambda x: torch.softmax(x, d))), (lambda d: Fn(lambda x: torch.log_softmax(x, d)))
    # attention scores: rows of 128 held in registers; large magnitudes need the max subtracted
    yield "softmax_rows_128", sm(-1), (r(6, 40, 128, scale=30, offset=1000),), {"softmax_cpu"}, set()
    yield "log_softmax_rows_64", lsm(-1), (r(3, 50, 64, scale=50, offset=-3000),), {"softmax_cpu"}, set()
    # 1040 = 260 texels: more than are held in registers, three passes of vec4 fetches
    yield "softmax_rows_1040", sm(-1), (r(21, 1040, scale=10),), {"softmax_cpu"}, set()
    yield "log_softmax_rows_1040", lsm(-1), (r(13, 1040, scale=3, offset=500),), {"softmax_cpu"}, set()
    # rows of a length that is not a multiple of 4: word fetches
    yield "softmax_rows_77", sm(-1), (r(33, 77, scale=20, offset=200),), {"softmax_cpu"}, set()
    yield "log_softmax_rows_5", lsm(-1), (r(7, 9, 5),), {"softmax_cpu"}, set()
    # an axis that is not the last: rows spaced `inner` apart
    yield "softmax_axis_1", sm(1), (r(4, 37, 6, scale=40),), {"softmax_cpu"}, set()
    yield "log_softmax_axis_0", lsm(0), (r(12, 5, 8, scale=5),), {"softmax_cpu"}, set()
    # LayerNormalization (opset 17): with and without B, rows held in registers or not, of a
    # length that is not a multiple of 4 (norm_rows_cpu), large means against small deviations
    yield "layer_norm_768_bias", ("ln", [9, 768], 1, True), (r(9, 768, scale=0.5, offset=100),), {"norm_rows_cpu_vec4"}, set()
    yield "layer_norm_96_no_bias", ("ln", [5, 7, 96], 2, False), (r(5, 7, 96, scale=3),), {"norm_rows_cpu_vec4"}, set()
    yield "layer_norm_2x12_axis1", ("ln", [3, 2, 12], 1, True), (r(3, 2, 12),), {"norm_rows_cpu_vec4"}, set()
    yield "layer_norm_1100", ("ln", [6, 1100], 1, True), (r(6, 1100, scale=4, offset=-50),), {"norm_rows_cpu_vec4"}, set()
    yield "layer_norm_30", ("ln", [11, 30], 1, False), (r(11, 30),), {"norm_rows_cpu"}, set()
    # the residual Add + LayerNorm of a post-norm transformer layer, fused into one dispatch
    yield "add_layer_norm_256", AddNorm(256), (r(2, 33, 256, offset=20), r(2, 33, 256)), \
        {"norm_rows_cpu_vec4"}, {"LayerNormalization"}
    # InstanceNormalization: a pair per row (4 channels), planes of 36
    inorm = nn.InstanceNorm2d(4, affine=True)
    with torch.no_grad():
        inorm.weight.copy_(torch.randn(4))
        inorm.bias.copy_(torch.randn(4))
    inorm.requires_grad_(False)
    yield "instance_norm_4x6x6", inorm, (r(2, 4, 6, 6, scale=2, offset=3),), {"norm_rows_cpu_vec4"}, set()
    # GroupNorm (PyTorch exports it as InstanceNormalization over the groups, then the per-channel
    # Mul and Add, which the row kernel takes): channels of 16 elements are whole texels
    # (norm_rows_cpu_vec4's per-channel pairs), channels of 6 are not (norm_rows_cpu), and the
    # U-Net policy's GroupNorm + Mish
    gnorms = {}
    for key, (groups, channels) in {"16": (8, 32), "6": (2, 6), "mish": (8, 32)}.items():
        g = nn.GroupNorm(groups, channels)
        with torch.no_grad():
            g.weight.copy_(torch.randn(channels))
            g.bias.copy_(torch.randn(channels))
        g.requires_grad_(False)
        gnorms[key] = nn.Sequential(g, nn.Mish()) if key == "mish" else g
    yield "group_norm_8x32x16", gnorms["16"], (r(2, 32, 16, scale=2, offset=-1),), {"norm_rows_cpu_vec4"}, set()
    yield "group_norm_2x6x6", gnorms["6"], (r(3, 6, 6, scale=3),), {"norm_rows_cpu"}, set()
    yield "group_norm_mish", gnorms["mish"], (r(2, 32, 16),), {"norm_rows_cpu_vec4"}, {"Mish", "Mul", "Add"}
    # a constant scale after the product (attention's scores) folds into its alpha: no Mul/Div
    # dispatch; Gemm's C (addmm) takes the factor too
    yield "matmul_mul_softmax", Fn(lambda q, k: torch.softmax((q @ k.transpose(-1, -2)) * 0.125, -1)), \
        (r(4, 50, 32), r(4, 60, 32)), {"softmax_cpu"}, {"Mul"}
    yield "matmul_div", Fn(lambda a, b: (a @ b) / 8.0), (r(3, 20, 16), r(3, 16, 12)), set(), {"Div"}
    yield "scalar_times_matmul", Fn(lambda a, b: 0.5 * (a @ b)), (r(17, 9), r(9, 23)), set(), {"Mul"}
    yield "addmm_mul", Fn(lambda c, a, b: torch.addmm(c, a, b) * -3.0), (r(24), r(10, 7), r(7, 24)), set(), {"Mul"}


def dispatches(vkinfer, path):
    """(kernel, op type) of every dispatch of one profiled run."""
    run = subprocess.run([vkinfer, "bench", path, "--random-inputs", "--runs", "1", "--warmup", "0", "--profile-all"],
                         capture_output=True, text=True)
    tail = run.stdout.split("every dispatch, in recorded order:")[-1]
    return re.findall(r"^\s+\d+\s+[\d.]+ ms\s+(\S+)\s+(\S+)", tail, re.M), run


def main():
    vkinfer = sys.argv[1]
    torch.manual_seed(0)
    failed = []
    for name, model, inputs, kernels, gone in cases():
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.onnx")
            names = [f"in{i}" for i in range(len(inputs))]
            if isinstance(model, tuple):
                ref = layer_norm_graph(path, model[1], model[2], model[3])(inputs[0].numpy())
            else:
                model.eval()
                with torch.no_grad():
                    ref = model(*inputs).double().numpy()
                export_onnx(model, inputs, path, names, ["out"], 17)
            cmd = [vkinfer, "run", path, "--output-dir", os.path.join(tmp, "out")]
            for n, t in zip(names, inputs):
                np.save(os.path.join(tmp, n + ".npy"), t.numpy())
                cmd += ["--input", f"{n}={os.path.join(tmp, n + '.npy')}"]
            run = subprocess.run(cmd, capture_output=True, text=True)
            out = os.path.join(tmp, "out", "out.npy")
            got = np.load(out) if run.returncode == 0 and os.path.exists(out) else None
            ran, prof = dispatches(vkinfer, path)
        ok = got is not None and got.shape == ref.shape and np.all(np.isfinite(got))
        err = float(np.max(np.abs(got.astype(np.float64) - ref))) if ok else float("inf")
        bound = 1e-5 * float(np.max(np.abs(ref))) + 1e-5
        ok = ok and err <= bound
        if not ok and run.returncode:
            print(run.stdout, run.stderr, sep="\n")
        kernel_names = {k for k, _ in ran}
        if not kernels <= kernel_names:
            print(f"FAIL {name}: {', '.join(sorted(kernels - kernel_names))} did not run (kernels: "
                  f"{', '.join(sorted(kernel_names)) or prof.stdout + prof.stderr})")
            ok = False
        own = {op for _, op in ran} & gone
        if own:
            print(f"FAIL {name}: {', '.join(sorted(own))} ran as a dispatch of its own (dispatches: {ran})")
            ok = False
        print(("PASS" if ok else "FAIL") + f" {name}: shape {ref.shape}, max abs error {err:.3g} (bound {bound:.3g}), "
              f"kernels {', '.join(sorted(kernel_names))}")
        if not ok:
            failed.append(name)
    return report(failed)


if __name__ == "__main__":
    sys.exit(main())
