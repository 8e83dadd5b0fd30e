#!/usr/bin/python3
"""vkinfer from Python: a torchvision classifier and a robot-policy-shaped network, run on the
GPU (or lavapipe) through Vulkan and compared with PyTorch eager. Seeded random weights, no
downloads.

    python3 examples/python/classify_and_act.py [--check]

With the package not installed, it is imported from this checkout's python/ folder, and the
library from build/ (or $VKINFER_LIBRARY). --check exits 1 if a result differs from eager.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402

import vkinfer  # noqa: E402


def close_to(got, want):
    err = float((got - want).abs().max())
    return err, err <= 1e-4 * float(want.abs().max()) + 1e-5


def classifier():
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10).eval()  # random weights: no download
    image = torch.rand(1, 3, 224, 224)
    # export, load and plan once; then each call uploads, runs the recorded commands, downloads
    net = vkinfer.from_torch(model, image, input_names=["image"], output_names=["logits"],
                             dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    t0 = time.perf_counter()
    logits = net(image)
    ms = (time.perf_counter() - t0) * 1e3
    with torch.no_grad():
        want = model(image)
    err, ok = close_to(logits, want)
    print(f"resnet18 on {net.session.device['name']}: logits {tuple(logits.shape)}, "
          f"class {int(logits.argmax())} (eager: {int(want.argmax())}), max |diff| {err:.2e}, first run {ms:.0f} ms")
    net.close()
    return ok


class Policy(torch.nn.Module):
    """Observation (state vector + camera features) -> action chunk, as small robot policies are."""

    def __init__(self, state=14, feat=64, horizon=8, act=7):
        super().__init__()
        self.horizon, self.act = horizon, act
        self.encode = torch.nn.Sequential(torch.nn.Linear(state + feat, 256), torch.nn.LayerNorm(256), torch.nn.Mish())
        self.trunk = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.Linear(256, 256),
                                         torch.nn.GELU())
        self.head = torch.nn.Linear(256, horizon * act)

    def forward(self, state, features):
        h = self.encode(torch.cat([state, features], dim=-1))
        return torch.tanh(self.head(self.trunk(h) + h)).reshape(-1, self.horizon, self.act)


def policy():
    torch.manual_seed(1)
    model = Policy().eval()
    state, feat = torch.randn(1, 14), torch.randn(1, 64)
    # the NumPy way: export once to a file, then vkinfer.Session
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"vkinfer-policy-{os.getpid()}.onnx")
    torch.onnx.export(model, (state, feat), path, input_names=["state", "features"], output_names=["actions"],
                      dynamic_axes={"state": {0: "batch"}, "features": {0: "batch"}, "actions": {0: "batch"}},
                      opset_version=17)
    ok = True
    try:
        with vkinfer.Session(path) as s:
            print("policy inputs: " + ", ".join(f"{i.name} {i.dtype}{list(i.shape)}" for i in s.inputs))
            for batch in (1, 16):
                st, ft = torch.randn(batch, 14), torch.randn(batch, 64)
                out = s.run({"state": st.numpy(), "features": ft.numpy()})["actions"]
                times = []
                for _ in range(20):
                    t0 = time.perf_counter()
                    s.run({"state": st.numpy(), "features": ft.numpy()})
                    times.append((time.perf_counter() - t0) * 1e3)
                with torch.no_grad():
                    want = model(st, ft)
                err, good = close_to(torch.from_numpy(out), want)
                ok = ok and good
                print(f"policy batch {batch}: actions {out.shape} {out.dtype}, max |diff| {err:.2e}, "
                      f"median {np.median(times):.2f} ms per step")
    finally:
        os.remove(path)
    return ok


def main():
    if not vkinfer.is_available():
        print("no Vulkan device (see docs/troubleshooting.md)")
        return 1
    ok = classifier() & policy()
    print("all results match PyTorch eager" if ok else "MISMATCH with PyTorch eager")
    return 0 if ok or "--check" not in sys.argv else 1


if __name__ == "__main__":
    sys.exit(main())
