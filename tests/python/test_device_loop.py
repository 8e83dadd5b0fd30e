"""A diffusion-policy-style denoising loop in Python whose sample never leaves the GPU:
Session.run(..., outputs_on_device=True) returns vkinfer.Tensor outputs that the next step
takes as its input. Ten steps must give exactly what the same loop gives through NumPy, and
PyTorch's loop within float32 rounding; a Tensor moves between two sessions of one Context
and is refused by a session of another.

    test_device_loop.py LIBVKINFER_SO"""
import os
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
os.environ["VKINFER_LIBRARY"] = sys.argv[1]
import vkinfer  # noqa: E402
from torch_export import export_onnx  # noqa: E402

failures = passes = 0


def check(what, ok, detail=""):
    global failures, passes
    print(("PASS " if ok else "FAIL ") + what + ("" if ok else f": {detail}"))
    failures += not ok
    passes += bool(ok)


class Denoiser(torch.nn.Module):
    """One step: x - 0.1 * tanh(MLP(x) + t)."""

    def __init__(self):
        super().__init__()
        self.mlp = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.Mish(), torch.nn.Linear(64, 16))

    def forward(self, x, t):
        return x - 0.1 * torch.tanh(self.mlp(x) + t)


def main():
    torch.manual_seed(0)
    model = Denoiser().eval()
    x0 = torch.randn(4, 16)
    steps = [np.array([k / 10], np.float32) for k in range(10)]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "denoiser.onnx")
        export_onnx(model, (x0, torch.tensor(steps[0])), path, ["x", "t"], ["y"], 17)
        ctx = vkinfer.Context()
        s = vkinfer.Session(path, context=ctx)
        with torch.no_grad():
            ref = x0
            for t in steps:
                ref = model(ref, torch.from_numpy(t))
        host = x0.numpy()
        for t in steps:
            host = s.run({"x": host, "t": t})["y"]
        x = vkinfer.Tensor(ctx, x0.numpy())
        for t in steps:
            out = s.run({"x": x, "t": t}, outputs_on_device=True)
            x = out["y"]
        check("outputs_on_device returns Tensors", isinstance(x, vkinfer.Tensor) and x.shape == (4, 16) and x.dtype == "float32",
              repr(x))
        dev = x.numpy()
        check("the device loop gives the host loop's bits", np.array_equal(dev, host), np.abs(dev - host).max())
        err = float(np.abs(dev - ref.numpy()).max())
        check(f"the device loop matches PyTorch's (max abs error {err:.2e})", err <= 1e-5, err)
        # a tensor from one session feeds another session of the same context
        s2 = vkinfer.Session(path, context=ctx)
        y2 = s2.run({"x": x, "t": steps[0]})["y"]
        y1 = s.run({"x": dev, "t": steps[0]})["y"]
        check("a Tensor moves between sessions of one Context", np.array_equal(y1, y2))
        other = vkinfer.Session(path)  # its own Context
        try:
            other.run({"x": x, "t": steps[0]})
            check("a Tensor of another Context is refused", False, "no error")
        except vkinfer.VkinferError as e:
            check("a Tensor of another Context is refused", "another Context" in str(e), e)
        # fp16 mode: device tensors keep the float32 inputs and outputs
        s16 = vkinfer.Session(path, context=ctx, precision="fp16")
        x16 = vkinfer.Tensor(ctx, x0.numpy())
        for t in steps:
            x16 = s16.run({"x": x16, "t": t}, outputs_on_device=True)["y"]
        err16 = float(np.abs(x16.numpy() - ref.numpy()).max())
        check(f"the fp16-mode device loop is within 1e-2 of PyTorch ({err16:.2e})", err16 <= 1e-2, err16)
        for obj in (other, s2, s16, s):
            obj.close()
    print(f"{passes} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
