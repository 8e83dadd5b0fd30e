"""MatMul / Gemm / Linear parity with PyTorch eager over the shapes the matmul kernels treat
differently: the issue-10 shapes ([563,512] x [512,512], [563,1,512] x [512,512]), batched 3-D
and 4-D products with broadcast batch dims, transposed operands, Gemm's alpha/beta and C
broadcast, small odd sizes (K not a multiple of 4, a 1x1 product), Linear with bias, a
Linear + ReLU that the kernel absorbs, products of 12 and 16 rows and of one column, the
float32 GPU kernel's cases (sgemm_*), narrow products that the CPU kernels run transposed
(narrow_*) and products whose B has k contiguous (K^T), which the CPU kernels read in place
(kt_*). Run once per kernel family (VKINFER_MATMUL_KERNELS=cpu, =gpu, =sgemm:
tests/CMakeLists.txt), so that each is checked on any device; with =sgemm the sgemm_* cases
must run matmul_sgemm (MATMUL_PARITY_SPLIT=finish: its *_fin form, split K ended by each
tile's last workgroup; =reduce: a reduce pass after it), with =cpu the kt_* cases must not pack B (and must with
VKINFER_CPU_MM_KT=0), and pack_rows_* must pack A a row per invocation (an element per
invocation with VKINFER_CPU_MM_PACK_ROWS=0).

    matmul_parity.py VKINFER
Passes when, for every case, max|vkinfer - eager| <= 1e-4 * max|eager| + 1e-5."""
import functools
import os
import re
import subprocess
import sys
import tempfile

import torch
import torch.nn as nn

from torch_export import Fn, export_onnx, report, run_exported, within


class ConstB(nn.Module):
    """x @ W with W a constant (an initializer the kernels may repack at plan time)."""

    def __init__(self, k, n):
        super().__init__()
        self.w = nn.Parameter(torch.randn(k, n))

    def forward(self, x):
        return x @ self.w


class ConvResidual(nn.Module):
    """A convolution whose residual Add the product takes as R."""

    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv1d(c, c, 3, padding=1)

    def forward(self, x):
        return torch.relu(self.conv(x) + x)


def cases():
    r = torch.randn
    yield "mm_563x512x512", Fn(torch.matmul), (r(563, 512), r(512, 512))
    yield "mm_563x1x512_broadcast_b", Fn(torch.matmul), (r(563, 1, 512), r(512, 512))
    yield "mm_const_b_563", ConstB(512, 512), (r(563, 512),)
    yield "batched_3d", Fn(torch.matmul), (r(6, 33, 52), r(6, 52, 20))
    yield "batched_3d_const_b_2d", ConstB(52, 20), (r(6, 33, 52),)
    yield "broadcast_4d", Fn(torch.matmul), (r(3, 1, 17, 24), r(5, 24, 9))
    yield "broadcast_4d_a", Fn(torch.matmul), (r(17, 24), r(2, 3, 24, 9))
    yield "transposed_a_b", Fn(lambda a, b: a.transpose(-1, -2) @ b.transpose(-1, -2)), (r(2, 40, 30), r(2, 12, 40))
    yield "vector_a", Fn(torch.matmul), (r(37), r(2, 37, 11))
    yield "vector_b", Fn(torch.matmul), (r(3, 9, 37), r(37))
    yield "odd_7x13x5", Fn(torch.matmul), (r(7, 13), r(13, 5))
    yield "one_1x1x1", Fn(torch.matmul), (r(1, 1), r(1, 1))
    yield "gemm_alpha_beta_col_c", Fn(lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=1.5)), (r(21, 1), r(21, 19), r(19, 30))
    yield "gemm_transposed", Fn(lambda c, a, b: torch.addmm(c, a.t(), b.t())), (r(30), r(19, 21), r(30, 19))
    # attention at a short sequence (the CPU kernels read such operands in place: matmul_cpu_small)
    yield "attention_qkt_relu", Fn(lambda q, k: torch.relu(q @ k.transpose(-1, -2))), (r(2, 3, 10, 16), r(2, 3, 10, 16))
    yield "attention_pv_broadcast", Fn(lambda p, v: p @ v.transpose(-1, -2)), (r(2, 3, 10, 7), r(1, 3, 13, 7))
    # an A whose rows are not whole texels (K 302, ACT's attention P V), packed on the device a
    # row per invocation (matmul_cpu_pack_rows) on CPU kernels
    yield "pack_rows_a_k302", Fn(torch.matmul), (r(4, 40, 302), r(302, 64))
    yield "linear_bias", nn.Linear(100, 70), (r(9, 100),)
    yield "linear_bias_3d", nn.Linear(64, 48), (r(2, 10, 64),)
    yield "linear_relu", nn.Sequential(nn.Linear(96, 40), nn.ReLU(), nn.Linear(40, 8)), (r(23, 96),)
    # 9 to 16 rows: the few-row kernel (matmul_gemv) on the GPU kernels, batched too
    yield "rows_12", Fn(torch.matmul), (r(12, 200), r(200, 90))
    yield "rows_16_batched", Fn(torch.matmul), (r(4, 16, 64), r(4, 64, 33))
    # one column: run as its transpose, one row (matmul_gemv), batched, with a bias and with C
    yield "column_n1", Fn(torch.matmul), (r(40, 300), r(300, 1))
    yield "column_n1_batched", Fn(torch.matmul), (r(3, 40, 300), r(3, 300, 1))
    yield "linear_to_one", nn.Sequential(nn.Linear(300, 1), nn.ReLU()), (r(50, 300),)
    yield "gemm_n1_c", Fn(lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=1.5)), (r(40, 1), r(40, 300), r(300, 1))
    # 64 rows and columns or more: matmul_sgemm on GPUs (VKINFER_MATMUL_KERNELS=sgemm takes it
    # on any device and checks that it ran): ragged edges of its tiles, K not a multiple of 4
    # (quads cut short), N not a multiple of 4 (no vec4 stores), operands transposed (quads
    # along rows), batched and broadcast, Gemm's C, a fused ReLU, split K, a convolution's product
    yield "sgemm_ragged", Fn(torch.matmul), (r(130, 77), r(77, 200))
    yield "sgemm_transposed_batched", Fn(lambda a, b: a.transpose(-1, -2) @ b.transpose(-1, -2)), (r(3, 90, 70), r(3, 66, 90))
    yield "sgemm_broadcast_4d", Fn(torch.matmul), (r(2, 1, 70, 64), r(3, 64, 66))
    yield "sgemm_gemm_c", Fn(lambda c, a, b: torch.addmm(c, a, b.t(), beta=0.5, alpha=1.5)), (r(65), r(100, 96), r(65, 96))
    yield "sgemm_linear_relu_3d", nn.Sequential(nn.Linear(96, 130), nn.ReLU()), (r(2, 50, 96),)
    yield "sgemm_split_k", Fn(torch.matmul), (r(64, 2000), r(2000, 64))
    yield "sgemm_conv", nn.Conv2d(8, 72, 3, padding=1), (r(2, 8, 12, 12),)
    # activations fused into the epilogue, compiled in by code (ACT): erf GELU, SiLU
    yield "sgemm_linear_gelu", nn.Sequential(nn.Linear(96, 130), nn.GELU()), (r(70, 96),)
    yield "sgemm_conv_silu", nn.Sequential(nn.Conv2d(8, 72, 3, padding=1), nn.SiLU()), (r(1, 8, 12, 12),)
    # such activations pass through shared memory (EPI_SHARED): whole tiles with vec4 stores, and a
    # residual added before the activation on ragged ones
    yield "sgemm_exact_linear_gelu", nn.Sequential(nn.Linear(128, 256), nn.GELU()), (r(256, 128),)
    yield "sgemm_residual_gelu", Fn(lambda a, b, c: nn.functional.gelu(a @ b + c)), (r(130, 96), r(96, 201), r(130, 201))
    # whole tiles of 128 and vec4 operands (the loads without bounds, EXACT): B as stored (a
    # MatMul), B transposed (a Linear's weight [N, K]), batched
    yield "sgemm_exact", Fn(torch.matmul), (r(256, 64), r(64, 128))
    yield "sgemm_exact_linear_batched", nn.Linear(256, 128), (r(2, 128, 256),)
    # at most 16 columns and many rows (a 1-D U-Net's convolutions at batch 1): the CPU kernels
    # run them transposed, Y^T = B^T A^T, stored in Y's layout where A is read in place, else
    # copied back (with =cpu: see the check in main)
    yield "narrow_conv1d_relu", nn.Sequential(nn.Conv1d(96, 130, 3, padding=1), nn.ReLU()), (r(1, 96, 4),)
    yield "narrow_conv1d_batched", nn.Conv1d(64, 80, 5, padding=2), (r(3, 64, 5),)
    yield "narrow_matmul", Fn(torch.matmul), (r(200, 64), r(64, 7))
    yield "narrow_conv1d_residual", ConvResidual(96), (r(2, 96, 4),)
    yield "narrow_gemm_c", Fn(lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=1.5)), (r(200, 1), r(200, 33), r(33, 16))
    # a 1-D U-Net's upsampling: W^T [64, 32] x X [32, 16] per image, then col2im
    yield "narrow_convtranspose1d", nn.ConvTranspose1d(32, 16, 4, stride=2, padding=1), (r(2, 32, 16),)
    # B with k contiguous (attention's K^T, Gemm's transB of an input): the CPU kernels read it
    # in place along k (B_KT) instead of packing it first (with =cpu no matmul_cpu_pack may run):
    # ragged blocks (N, M not multiples of the block or of 4), B broadcast over a batch axis,
    # K^T as a view of a [seq, heads, dh] K (column stride heads*dh), Gemm's C with a ReLU, K = 4
    yield "kt_attention_qkt", Fn(lambda q, k: q @ k.transpose(-1, -2)), (r(8, 128, 32), r(8, 128, 32))
    yield "kt_ragged", Fn(lambda q, k: q @ k.transpose(-1, -2)), (r(3, 37, 20), r(3, 45, 20))
    yield "kt_broadcast_4d", Fn(lambda q, k: q @ k.transpose(-1, -2)), (r(2, 3, 40, 24), r(1, 3, 150, 24))
    yield "kt_heads_view", Fn(lambda q, k: q.permute(1, 0, 2) @ k.permute(1, 2, 0)), (r(70, 6, 16), r(90, 6, 16))
    yield "kt_gemm_c_relu", Fn(lambda c, a, b: torch.relu(torch.addmm(c, a, b.t(), beta=0.5, alpha=1.5))), \
        (r(130), r(100, 4), r(130, 4))
    # A's texels fetched a lane each and shuffled to all (matmul_cpu_lanes; with =cpu on a device
    # with 8-lane subgroups it must run unless VKINFER_CPU_MM_A_LANES=0): rows past M in the last
    # block (clamped to M's last), a 1x1 convolution's transposed product reading X along m (A_T), a Linear with its
    # bias and ReLU, a batched product
    yield "lanes_ragged_rows", Fn(torch.matmul), (r(203, 72), r(72, 150))
    yield "lanes_conv1x1_a_t", nn.Sequential(nn.Conv2d(64, 384, 1), nn.ReLU6()), (r(1, 64, 14, 14),)
    yield "lanes_linear_relu", nn.Sequential(nn.Linear(128, 96), nn.ReLU()), (r(250, 128),)
    yield "lanes_batched", Fn(torch.matmul), (r(3, 90, 44), r(3, 44, 120))
    # blocks of 9 and 12 rows: 8 through the lanes, the rest a fetch per row (12: A read along m)
    yield "lanes_tail_rows", Fn(torch.matmul), (r(9, 256), r(256, 4000))
    yield "lanes_tail_a_t", nn.Conv2d(64, 3000, 1), (r(1, 64, 3, 4),)


MM_CPU = {"matmul_cpu", "matmul_cpu_lanes"}  # the CPU devices' product kernels


@functools.lru_cache(maxsize=None)
def device_subgroup(vkinfer):
    """The subgroup size `vkinfer devices` reports for the device the runs take (0 if none)."""
    out = subprocess.run([vkinfer, "devices"], capture_output=True, text=True).stdout
    sizes = re.findall(r"subgroup size: (\d+)", out)
    return int(sizes[0]) if sizes else 0


def profiled_kernels(vkinfer, model, inputs):
    """The kernels one profiled run of the exported model dispatches."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        export_onnx(model, inputs, path, [f"in{i}" for i in range(len(inputs))], ["out"], 13)
        run = subprocess.run([vkinfer, "bench", path, "--random-inputs", "--runs", "1", "--warmup", "0", "--profile"],
                             capture_output=True, text=True)
        return set(re.findall(r"^\s+[\d.]+ ms\s+(\S+)\s", run.stdout, re.M))


def main():
    vkinfer = sys.argv[1]
    torch.manual_seed(0)
    failed = []
    for name, model, inputs in cases():
        model.eval()
        with torch.no_grad():
            ref = model(*inputs).numpy()
        with tempfile.TemporaryDirectory() as tmp:
            run, got = run_exported(vkinfer, model, inputs, tmp, 13)
        ok, err, bound = within(got, ref, 1e-4, 1e-5)
        if name == "linear_relu" and " 1 fused into their producer" not in run.stdout:
            print(f"FAIL {name}: the ReLU was not fused into its Gemm")
            ok = False
        if name.startswith("sgemm_") and os.environ.get("VKINFER_MATMUL_KERNELS") == "sgemm" and ok:
            kernels = profiled_kernels(vkinfer, model, inputs)
            split = os.environ.get("MATMUL_PARITY_SPLIT")  # finish | reduce: how split K must end
            if not any(k.startswith("matmul_sgemm") for k in kernels):
                print(f"FAIL {name}: matmul_sgemm did not run (kernels: {', '.join(sorted(kernels))})")
                ok = False
            elif split == "finish" and not (any(k.endswith("_fin") for k in kernels) and
                                            "matmul_splitk_reduce" not in kernels):
                print(f"FAIL {name}: split K not finished in the product's dispatch (kernels: {', '.join(sorted(kernels))})")
                ok = False
            elif split == "reduce" and "matmul_splitk_reduce" not in kernels:
                print(f"FAIL {name}: split K without its reduce pass (kernels: {', '.join(sorted(kernels))})")
                ok = False
        if name.startswith("narrow_") and os.environ.get("VKINFER_MATMUL_KERNELS") == "cpu" and ok and \
                os.environ.get("VKINFER_CPU_MM_TRANSPOSE") != "0":
            kernels = profiled_kernels(vkinfer, model, inputs)
            # convolutions run as Conv's own transposed product (im2col_t_cpu), unless
            # VKINFER_CPU_CONV_TRANSPOSE=0 leaves them to the MatMul's (a copy back)
            conv_own = "conv1d" in name and os.environ.get("VKINFER_CPU_CONV_TRANSPOSE") != "0"
            copied = any(k.startswith("copy") for k in kernels)
            # the transposed product stores Y^T in Y's layout (Y_T) where it reads its A in place
            # (X, the columns): no copy back; VKINFER_CPU_MM_Y_T=0 copies it back, which shows
            # that these same cases run transposed (model/matmul_parity_cpu_no_y_t)
            y_t = os.environ.get("VKINFER_CPU_MM_Y_T") != "0" and name in (
                "narrow_convtranspose1d", "narrow_conv1d_relu", "narrow_conv1d_residual")
            if conv_own:
                if "im2col_t_cpu" not in kernels:
                    print(f"FAIL {name}: not run as Conv's transposed product (kernels: {', '.join(sorted(kernels))})")
                    ok = False
            elif copied == y_t:
                print(f"FAIL {name}: {'a copy back where Y^T is stored in place' if y_t else 'not run transposed'} "
                      f"(kernels: {', '.join(sorted(kernels))})")
                ok = False
        if name.startswith("kt_") and os.environ.get("VKINFER_MATMUL_KERNELS") == "cpu" and ok:
            kernels = profiled_kernels(vkinfer, model, inputs)
            packed = "matmul_cpu_pack" in kernels
            if not kernels & MM_CPU or packed != (os.environ.get("VKINFER_CPU_MM_KT") == "0"):
                print(f"FAIL {name}: B not read {'packed' if packed else 'in place'} as asked (kernels: {', '.join(sorted(kernels))})")
                ok = False
        if name.startswith("lanes_") and os.environ.get("VKINFER_MATMUL_KERNELS") == "cpu" and ok and \
                device_subgroup(vkinfer) == 8:
            kernels = profiled_kernels(vkinfer, model, inputs)
            lanes = "matmul_cpu_lanes" in kernels
            if lanes == (os.environ.get("VKINFER_CPU_MM_A_LANES") == "0") or (
                    name == "lanes_conv1x1_a_t" and "im2col_t_cpu" in kernels):
                print(f"FAIL {name}: A {'not ' if not lanes else ''}fetched a lane each against the setting, or the "
                      f"1x1 convolution not read in place (kernels: {', '.join(sorted(kernels))})")
                ok = False
        if name.startswith("pack_rows_") and os.environ.get("VKINFER_MATMUL_KERNELS") == "cpu" and ok:
            kernels = profiled_kernels(vkinfer, model, inputs)
            rows = "matmul_cpu_pack_rows" in kernels
            if not kernels & MM_CPU or rows == (os.environ.get("VKINFER_CPU_MM_PACK_ROWS") == "0"):
                print(f"FAIL {name}: A not packed {'an element' if rows else 'a row'} per invocation as asked "
                      f"(kernels: {', '.join(sorted(kernels))})")
                ok = False
        print(("PASS" if ok else "FAIL") + f" {name}: shape {ref.shape}, max abs error {err:.3g} (bound {bound:.3g})")
        if not ok:
            failed.append(name)
    return report(failed)


if __name__ == "__main__":
    sys.exit(main())
