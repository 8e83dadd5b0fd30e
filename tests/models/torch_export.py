"""What the model tests and benchmarks share: exporting a PyTorch model to ONNX the same way
on torch 1.13 (Debian, CI) and torch 2.x (the GPU machine), and giving BatchNorm layers
non-trivial seeded statistics; a profiled run's dispatches; the count of failed cases."""
import os
import re
import subprocess

import numpy as np
import torch


def export_onnx(model, inputs, path, input_names, output_names, opset=13):
    """The TorchScript exporter on every torch version (2.x defaults to the dynamo one). A model
    with an `onnx_dynamic_axes` attribute is exported with those dynamic axes (shapes then come
    from Shape nodes, as in a graph exported for any batch size)."""
    kwargs = dict(input_names=input_names, output_names=output_names, opset_version=opset)
    if getattr(model, "onnx_dynamic_axes", None):
        kwargs["dynamic_axes"] = model.onnx_dynamic_axes
    try:
        torch.onnx.export(model, inputs, path, dynamo=False, **kwargs)
    except TypeError:  # torch < 2.5 has no dynamo argument
        torch.onnx.export(model, inputs, path, **kwargs)


class Fn(torch.nn.Module):
    """A function of the inputs as a module, to export one expression."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def randomize_batchnorm(model, seed=1):
    """Random affine parameters and running statistics, so that BatchNorm is not an identity."""
    gen = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            c = m.num_features
            m.weight.data = torch.rand(c, generator=gen) * 0.5 + 0.75
            m.bias.data = torch.randn(c, generator=gen) * 0.1
            m.running_mean = torch.randn(c, generator=gen) * 0.1
            m.running_var = torch.rand(c, generator=gen) * 0.5 + 0.75
    return model


def run_exported(vkinfer, model, inputs, tmp, opset, extra=()):
    """Exports `model` (inputs in0, in1..., output 'out') into folder `tmp`, runs `vkinfer run`
    on the inputs (with `extra` arguments) and returns (process, output array or None). bfloat16 inputs are saved as
    float32, which vkinfer takes for them (numpy has no bfloat16)."""
    names = [f"in{i}" for i in range(len(inputs))]
    path = os.path.join(tmp, "model.onnx")
    export_onnx(model, inputs, path, names, ["out"], opset)
    cmd = [vkinfer, "run", path, "--output-dir", os.path.join(tmp, "out"), *extra]
    for n, t in zip(names, inputs):
        np.save(os.path.join(tmp, n + ".npy"), t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy())
        cmd += ["--input", f"{n}={os.path.join(tmp, n + '.npy')}"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    print(run.stdout, run.stderr, sep="\n")
    got = np.load(os.path.join(tmp, "out", "out.npy")) if run.returncode == 0 else None
    return run, got


def profiled_dispatches(vkinfer, path, extra=(), names=False):
    """(kernel, node op type) of each dispatch of one profiled run of the model at `path` on
    random inputs (`vkinfer bench --profile-all`), in recorded order (names: (kernel, op type,
    node name)); None where the run printed no profile."""
    prof = subprocess.run([vkinfer, "bench", path, "--random-inputs", "--runs", "1", "--warmup", "0", "--profile-all",
                           *extra], capture_output=True, text=True).stdout
    if "recorded order" not in prof:
        return None
    if names:
        return re.findall(r"^\s+\d+\s+[\d.]+ ms\s+(\S+)\s+(\S+)\s.*\s(\S+)$", prof, re.M)
    return re.findall(r"^\s+\d+\s+[\d.]+ ms\s+(\S+)\s+(\S+)\s", prof, re.M)


def within(got, ref, rel, absolute):
    """(ok, max abs error, bound): got (None where the run failed) against ref, shapes equal and
    max|got - ref| <= rel * max|ref| + absolute."""
    ok = got is not None and got.shape == ref.shape
    err = float(np.max(np.abs(got.astype(np.float64) - ref))) if ok else float("inf")
    bound = rel * float(np.max(np.abs(ref))) + absolute
    return ok and err <= bound, err, bound


def report(failed):
    """Prints the failed cases' count and names; the exit status for them."""
    print(f"{len(failed)} failed" + (": " + ", ".join(failed) if failed else ""))
    return 1 if failed else 0
