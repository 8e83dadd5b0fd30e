"""Transformer ops on 16-bit storage: the policy transformer encoder at batch 8 and a small
module of the ops transformers run besides MatMul (Transpose, Concat, Split, Slice, Expand,
Gather as an embedding, Where on a mask, ReduceMean, LayerNorm, Softmax).

    half_transformer.py VKINFER

Checks, for each model: (a) `--precision fp16` against fp32 eager, max|err| <= 1e-2 * max|ref|;
(b) the model in bfloat16 against bfloat16 eager on the CPU, max|err| <= 2^-6 * max|ref|;
(c) the ops run their 16-bit kernels in the fp16 mode: no op type has more dispatches than in
fp32 (no conversions around it), and small one-op models, whose every dispatch the profile
lists, name the _f16 (or copy_16) shader; (d) bool, 8- and 16-bit tensors move exactly through
copy_8 / copy_16. Prints the errors and the dispatch counts."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from policies import Transformer  # noqa: E402
from torch_export import export_onnx  # noqa: E402

OPSET = 17


class Mix(nn.Module):
    """Every op of the family at least once, on [batch, 10, 64] activations."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 64)
        self.norm = nn.LayerNorm(64)

    def forward(self, x, ids):
        h = x + self.embed(ids)                                      # Gather
        a, b = h.split(32, dim=-1)                                   # Split
        c = torch.cat([b, a * 0.5], dim=-1)                          # Concat
        c = torch.where((ids > 25).unsqueeze(-1), c, -c)             # Where (bool mask)
        m = c.mean(-1, keepdim=True).expand(-1, -1, 64)              # ReduceMean, Expand
        t = h.transpose(1, 2).mean(2).unsqueeze(1)                   # Transpose, ReduceMean
        ln = self.norm(c - m + t)                                    # LayerNormalization
        s = torch.softmax(ln[:, 1:9], dim=-1)                        # Slice, Softmax
        return torch.cat([ln[:, :1], s * 8.0, ln[:, 9:]], dim=1) * 2.0


def cases():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 50, (8, 10), generator=gen)
    return {
        "transformer": (Transformer().eval(), [torch.randn(8, 10, 64, generator=gen)]),
        "mix": (Mix().eval(), [torch.randn(8, 10, 64, generator=gen), ids]),
    }


def export(model, inputs, tmp, tag):
    """Exports into tmp/<tag>.onnx and saves the inputs (bfloat16 ones as float32)."""
    names = [f"in{i}" for i in range(len(inputs))]
    path = os.path.join(tmp, tag + ".onnx")
    export_onnx(model, tuple(inputs), path, names, ["out"], OPSET)
    args = []
    for n, t in zip(names, inputs):
        f = os.path.join(tmp, f"{tag}_{n}.npy")
        np.save(f, t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy())
        args += ["--input", f"{n}={f}"]
    return path, args


def vk(vkinfer, *args):
    run = subprocess.run([vkinfer, *args], capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stdout, run.stderr, sep="\n")
        raise SystemExit(f"FAIL: vkinfer {' '.join(args[:2])} exited {run.returncode}")
    return run.stdout


def run_model(vkinfer, path, args, tmp, extra=()):
    out = os.path.join(tmp, "out")
    vk(vkinfer, "run", path, "--output-dir", out, *args, *extra)
    return np.load(os.path.join(out, "out.npy")).astype(np.float64)


def check(label, got, ref, rel):
    err = float(np.max(np.abs(got - ref))) if got.shape == ref.shape else float("inf")
    bound = rel * float(np.max(np.abs(ref)))
    print(f"{label}: max abs error {err:.3g} (bound {bound:.3g})")
    return err <= bound


def dispatches_by_op(vkinfer, path, precision):
    """(total dispatches, {op: dispatches}) from the profile summary."""
    text = vk(vkinfer, "bench", path, "--random-inputs", "--precision", precision, "--profile", "--runs", "1",
              "--warmup", "0")
    counts, total = {}, None
    for line in text.splitlines():
        words = line.split()
        if line.startswith("GPU time:"):
            total = int(words[words.index("dispatches") - 1])
        elif len(words) == 6 and words[-1] == "dispatches" and words[2] == "ms":
            counts[words[0]] = int(words[4])
    return total, counts, text


def one_op_models(tmp):
    """Small single-op models (fewer dispatches than the profile lists) and the shader each
    must name in the fp16 mode."""
    # odd runs (5 x 33, 3 x 33): a copy with even runs and offsets moves its elements in 4-,
    # 8- or 16-byte groups, whose shader names would not show the storage
    x = torch.randn(4, 5, 33)
    ids = torch.randint(0, 6, (4, 5))
    # each op between two Muls: graph inputs and outputs stay float32 words in the fp16 mode
    mods = {
        # (read by a Tanh: a Transpose or a strided Slice that only a Mul reads is a view the
        # Mul reads in place)
        "Transpose": (lambda x: torch.tanh(x.transpose(1, 2)), [x], "copy_16"),
        "Concat": (lambda x: torch.cat([x, x], 1), [x], "copy_16"),
        "Slice": (lambda x: torch.tanh(x[:, 1:4]), [x], "copy_16"),
        # (GPUs with subgroup arithmetic run its subgroup-per-row form, softmax_sg_f16)
        "Softmax": (lambda x: torch.softmax(x, -1), [x], ("softmax_f16", "softmax_sg_f16")),
        "LayerNormalization": (nn.LayerNorm(33), [x], "norm_rows_f16"),
        "ReduceMean": (lambda x: x.mean(-1), [x], "reduce_f16"),
        "Where": (lambda x: torch.where(x > 0, x, -x), [x], "where_f16"),
        "Gather": (lambda i: Lambda.embed(i), [ids], "gather_f16"),
    }
    ok = True
    for op, (fn, inputs, shader) in mods.items():
        path, _ = export(Lambda(fn).eval(), inputs, tmp, "one_" + op)
        _, _, text = dispatches_by_op(sys.argv[1], path, "fp16")
        names = [line.split()[2] for line in text.splitlines() if line.split()[-1:] and
                 len(line.split()) >= 5 and line.split()[3] == op]
        good = any(s in names for s in (shader if isinstance(shader, tuple) else (shader,)))
        print(f"{op}: fp16 dispatches {names} -> {'uses' if good else 'MISSING'} {shader}")
        ok &= good
    return ok


class Lambda(nn.Module):
    """fn between two Muls (only the second for integer inputs)."""
    embed = nn.Embedding(6, 32)

    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        self.table = Lambda.embed  # registered, so that the exporter keeps it as a weight

    def forward(self, x):
        return self.fn(x * 2.0 if x.is_floating_point() else x) * 2.0


def movement_dtypes(vkinfer, tmp):
    """Transpose, Concat, Slice and Expand of bool, 8- and 16-bit tensors (the dtype's own
    storage): exact, and moved by copy_8 / copy_16 (every run and offset odd, so that no copy
    moves its elements in wider groups)."""
    import onnx
    from onnx import TensorProto, helper
    ok = True
    for dt, npdt, shader in [(TensorProto.BOOL, np.bool_, "copy_8"), (TensorProto.INT8, np.int8, "copy_8"),
                             (TensorProto.UINT8, np.uint8, "copy_8"), (TensorProto.INT16, np.int16, "copy_16"),
                             (TensorProto.FLOAT16, np.float16, "copy_16")]:
        nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
                 helper.make_node("Concat", ["t", "t"], ["c"], axis=0),
                 helper.make_node("Slice", ["c", "starts", "ends"], ["s"]),
                 helper.make_node("Expand", ["s", "shape"], ["y"])]
        consts = [helper.make_tensor("starts", TensorProto.INT64, [1], [1]),
                  helper.make_tensor("ends", TensorProto.INT64, [1], [2]),
                  helper.make_tensor("shape", TensorProto.INT64, [4], [3, 2, 5, 3])]
        graph = helper.make_graph(nodes, "movement", [helper.make_tensor_value_info("x", dt, [1, 3, 5])],
                                  [helper.make_tensor_value_info("y", dt, None)], consts)
        path = os.path.join(tmp, f"movement_{dt}.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)]), path)
        x = (np.random.RandomState(0).randn(1, 3, 5) * 50).astype(npdt)
        np.save(os.path.join(tmp, "x.npy"), x)
        t = x.transpose(0, 2, 1)
        ref = np.broadcast_to(np.concatenate([t, t], 0)[1:2], (3, 2, 5, 3))
        out = os.path.join(tmp, "out")
        vk(vkinfer, "run", path, "--input", f"x={os.path.join(tmp, 'x.npy')}", "--output-dir", out)
        got = np.load(os.path.join(out, "y.npy"))
        _, _, text = dispatches_by_op(vkinfer, path, "fp32")
        shaders = {line.split()[2] for line in text.splitlines() if line.split()[1:2] == ["ms"]}
        good = got.dtype == ref.dtype and got.shape == ref.shape and bool((got == ref).all()) and shaders == {shader}
        print(f"movement {np.dtype(npdt).name}: {'exact' if good else 'FAIL'}, shaders {sorted(shaders)}")
        ok &= good
    return ok


FAMILY = ["Transpose", "Concat", "Split", "Slice", "Expand", "Gather", "Where", "ReduceMean",
          "LayerNormalization", "Softmax"]


def main():
    vkinfer = sys.argv[1]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for name, (model, inputs) in cases().items():
            with torch.no_grad():
                ref = model(*inputs).double().numpy()
            path, args = export(model, inputs, tmp, name)
            ok &= check(f"{name} fp16 mode vs fp32 eager", run_model(vkinfer, path, args, tmp, ["--precision", "fp16"]),
                        ref, 1e-2)
            total32, ops32, _ = dispatches_by_op(vkinfer, path, "fp32")
            total16, ops16, _ = dispatches_by_op(vkinfer, path, "fp16")
            print(f"{name} dispatches: fp32 {total32}, fp16 {total16}")
            for op in FAMILY:  # fp32 may convert bool masks to words (Where); fp16 must add nothing
                if op in ops32:
                    fine = ops16.get(op, 0) <= ops32[op]
                    print(f"  {op}: fp32 {ops32[op]}, fp16 {ops16.get(op)}{'' if fine else '  (conversions: FAIL)'}")
                    ok &= fine
            # bfloat16: the model's own dtype, against torch's bfloat16 CPU kernels
            bmodel = model.to(torch.bfloat16)
            binputs = [t.to(torch.bfloat16) if t.is_floating_point() else t for t in inputs]
            with torch.no_grad():
                bref = bmodel(*binputs).double().numpy()
            bpath, bargs = export(bmodel, binputs, tmp, name + "_bf16")
            got = run_model(vkinfer, bpath, bargs, tmp)
            ok &= check(f"{name} bfloat16 vs bf16 eager", got, bref, 2.0 ** -6)
            check(f"{name} bfloat16 vs fp32 eager (information)", got, ref, 1.0)
        ok &= one_op_models(tmp)
        ok &= movement_dtypes(vkinfer, tmp)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
