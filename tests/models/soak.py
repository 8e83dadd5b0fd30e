"""Soak test of a robot-policy-shaped network: exports one of policies.py's models (seeded
weights) to ONNX and runs it RUNS times in one session with tests/unit/test_soak.c (outputs
bit-identical every run, RSS and device memory flat after warm-up), then compares the first
output with PyTorch eager on the same inputs.

    soak.py TEST_SOAK RUNS [CASE]

CASE: a policies.py case with float32 inputs (default transformer). make test runs a few
thousand runs; the same command with 100000 is the long soak."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

from policies import case
from torch_export import export_onnx


def soak_input(shape, k, seed=0):
    """Input k as test_soak.c fills it: x[i] = ((i * 37 + 11 k + 5 seed) % 101 - 50) / 25."""
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((i * 37 + 11 * k + 5 * seed) % 101 - 50).astype(np.float32) / np.float32(25)).reshape(shape)


def main():
    test_soak, runs = sys.argv[1], sys.argv[2]
    name = sys.argv[3] if len(sys.argv) > 3 else "transformer"
    model, inputs = case(name)
    model.eval()
    inputs = tuple(torch.from_numpy(soak_input(tuple(t.shape), k)) for k, t in enumerate(inputs))
    with torch.no_grad():
        ref = model(*inputs).numpy()
    with tempfile.TemporaryDirectory() as tmp:
        path, out = os.path.join(tmp, f"{name}.onnx"), os.path.join(tmp, "out.bin")
        export_onnx(model, inputs, path, [f"in{k}" for k in range(len(inputs))], ["out"], 17)
        run = subprocess.run([test_soak, path, runs, out])
        if run.returncode != 0:
            print(f"FAIL soak of {name}: test_soak exited {run.returncode}")
            return 1
        got = np.fromfile(out, dtype=np.float32)
    if got.size != ref.size:
        print(f"FAIL {name}: {got.size} output values, PyTorch has {ref.size}")
        return 1
    err = float(np.max(np.abs(got.astype(np.float64) - ref.reshape(-1))))
    bound = 1e-4 * float(np.max(np.abs(ref))) + 1e-5
    print(f"{name}: first output against PyTorch eager: max abs error {err:.3g} (bound {bound:.3g})")
    print(("PASS" if err <= bound else "FAIL") + f" soak {name}, {runs} runs")
    return 0 if err <= bound else 1


if __name__ == "__main__":
    sys.exit(main())
