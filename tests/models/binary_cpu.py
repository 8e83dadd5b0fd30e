"""Element-wise Add, Sub, Mul and Div of float32, alone and as two-step chains (FiLM's
x * scale + shift, a square, a permuted input), against PyTorch eager, and which kernel runs
them: on binary_chain_cpu (4 outputs of a row per invocation, inputs through texel buffers)
where the device is a CPU one (or VKINFER_ELEMENTWISE_KERNELS=cpu) and the count and the
innermost dim of the pass are multiples of 4; on binary / binary_chain otherwise (the *_odd
cases, and every case with VKINFER_ELEMENTWISE_KERNELS=gpu).

    binary_cpu.py VKINFER

Passes when every case is within 1e-6 * max|eager| + 1e-6 of eager (Div: correctly rounded as
eager is, so this is a few ulp) and ran the kernel expected."""
import os
import sys
import tempfile

import numpy as np
import torch

from matmul_parity import profiled_kernels
from torch_export import Fn, report, run_exported, within


def cases():
    r = torch.randn
    # name, module, inputs, whether the CPU kernel may take it (count and inner dim % 4)
    yield "add_broadcast", Fn(lambda x, p: x + p), (r(2, 10, 64), r(1, 10, 64)), True
    yield "sub_per_row", Fn(lambda x, s: x - s), (r(3, 8, 12), r(3, 8, 1)), True  # s broadcast along rows of 12
    yield "add_same_odd_rows", Fn(lambda a, b: a + b), (r(4, 6), r(4, 6)), True  # same shapes: one flat row of 24
    yield "add_rows_of_6", Fn(lambda a, b: a + b), (r(4, 6), r(1, 6)), False
    yield "mul_same", Fn(lambda a, b: a * b), (r(4, 16), r(4, 16)), True
    yield "div_broadcast", Fn(lambda a, b: a / b), (r(2, 6, 8), r(6, 8).abs() + 0.5), True
    yield "div_relu", Fn(lambda a, b: torch.relu(a / b)), (r(2, 6, 8), r(6, 8).abs() + 0.5), True
    yield "film", Fn(lambda h, s, b: h * s + b), (r(2, 32, 16), r(2, 32, 1), r(2, 32, 1)), True
    yield "film_swapped", Fn(lambda h, s, b: b - h * s), (r(2, 32, 16), r(2, 32, 1), r(2, 32, 1)), True
    yield "square", Fn(lambda x, m: (x - m) * (x - m)), (r(4, 24), r(4, 1)), True
    yield "permuted", Fn(lambda x, y: x.permute(0, 2, 1) * 2.0 + y), (r(2, 8, 12), r(2, 12, 8)), True
    yield "add_odd", Fn(lambda a, b: a + b), (r(3, 5, 7), r(5, 7)), False
    yield "film_odd", Fn(lambda h, s, b: h * s + b), (r(2, 5, 6), r(2, 5, 1), r(2, 5, 1)), False


def main():
    vkinfer = sys.argv[1]
    force = os.environ.get("VKINFER_ELEMENTWISE_KERNELS")
    torch.manual_seed(0)
    failed = []
    for name, model, inputs, four in cases():
        with torch.no_grad():
            ref = model(*inputs).numpy().astype(np.float64)
        with tempfile.TemporaryDirectory() as tmp:
            run, got = run_exported(vkinfer, model, inputs, tmp, 13)
        ok, err, bound = within(got, ref, 1e-6, 1e-6)
        kernels = profiled_kernels(vkinfer, model, inputs)
        on_cpu, want = "binary_chain_cpu" in kernels, four and force != "gpu"
        wrong = "" if on_cpu == want else f"; binary_chain_cpu {'ran' if on_cpu else 'did not run'}, against expectation"
        ok = ok and not wrong
        print(("PASS" if ok else "FAIL") + f" {name}: max abs error {err:.3g} (bound {bound:.3g}), "
              f"kernels {', '.join(sorted(kernels))}{wrong}")
        failed += [] if ok else [name]
    return report(failed)


if __name__ == "__main__":
    sys.exit(main())
