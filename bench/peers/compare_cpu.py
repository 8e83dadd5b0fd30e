"""Side by side on one CPU machine: vkinfer on a CPU Vulkan device (lavapipe), onnxruntime CPU
and PyTorch eager CPU, all with the same thread count, on the same .onnx files: lone MatMuls
(issue 10's shapes and a 1024 cube), the robot-policy-shaped test networks
(tests/models/policies.py), two torchvision CNNs (tests/models/parity.py) and, with --cases,
a TD-MPC2-shaped Q ensemble over 563 candidates (tdmpc_q) and a SAC-style actor (sac_actor).

    /usr/bin/python3 bench/peers/compare_cpu.py VKINFER [--threads 2] [--runs 20] [--warmup 3]
        [--cases mm_563,...] [--markdown OUT.md]
(onnxruntime, ncnn and pnnx come from a virtual environment: /usr/bin/python3 -m venv --system-site-packages
/work/venv-ort && /work/venv-ort/bin/pip install onnxruntime ncnn pnnx, then /work/venv-ort/bin/python bench/peers/compare_cpu.py ...)

Times are medians of --runs whole inferences after --warmup, host input to host output
(vkinfer bench: upload + device + download), each peer measured in --rounds alternating rounds
(this VM's timings drift by up to 2x) and the median of the rounds reported. lavapipe's thread
count is set with `vkinfer bench --cpu-threads` (LP_NUM_THREADS): --threads, twice that (what
vkinfer chooses for larger models on 2 cores) and 0 (every dispatch on lavapipe's submit thread:
faster for small networks), onnxruntime's with
intra_op_num_threads, PyTorch's with set_num_threads.
GFLOP/s is given for the MatMuls (2 M N K per product).
ncnn (its PyPI wheel, with pnnx from PyPI converting each torch module; both installed in the
same virtual environment) runs beside them where the conversion works: on its CPU path with the
same threads, and on its Vulkan path on the same lavapipe device in fp32 (fp16 storage and
arithmetic off, as vkinfer computes); its outputs are checked against PyTorch's (pnnx stores
the weights as float16 by default: errors of ~1e-4 relative). ncnn runs a layer that has no
Vulkan implementation on its CPU path inside the Vulkan net, so its Vulkan column can hold CPU
work: the 563-row MatMul of two inputs took 1.9 ms in its Vulkan net and 41.8 ms with a
constant B, likely such a fallback (not checked in ncnn's code). Each ncnn measurement runs in
a child process, so that a crash in ncnn or pnnx is reported in the table, not fatal."""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "models"))
import policies  # noqa: E402  the same seeded networks as the tests
from parity import build  # noqa: E402
from torch_export import export_onnx  # noqa: E402
from compare import timed  # noqa: E402  (bench/peers/compare.py: median of timed runs after warm-up)


class MatMul(nn.Module):
    def forward(self, a, b):
        return a @ b


class Linear(nn.Module):
    """x @ W with W a constant: the weights the kernels may repack at plan time."""

    def __init__(self, k, n):
        super().__init__()
        self.w = nn.Parameter(torch.randn(k, n))

    def forward(self, x):
        return x @ self.w


class NormedLinear(nn.Module):
    """TD-MPC2's layer: Linear, LayerNorm, Mish."""

    def __init__(self, i, o):
        super().__init__()
        self.l, self.n = nn.Linear(i, o), nn.LayerNorm(o)

    def forward(self, x):
        return nn.functional.mish(self.n(self.l(x)))


class QEnsemble(nn.Module):
    """TD-MPC2-shaped Q ensemble (issue 10's TD-MPC row): 5 Q heads, each NormedLinear(latent 512
    + action 6, 512), NormedLinear(512, 512), Linear(512, 101 two-hot bins), over a batch of
    candidates; the heads' outputs stacked."""

    def __init__(self, latent=512, action=6, mlp=512, bins=101, heads=5):
        super().__init__()
        self.qs = nn.ModuleList(nn.Sequential(NormedLinear(latent + action, mlp), NormedLinear(mlp, mlp),
                                              nn.Linear(mlp, bins)) for _ in range(heads))

    def forward(self, z, a):
        x = torch.cat([z, a], -1)
        return torch.stack([q(x) for q in self.qs])


class SacActor(nn.Module):
    """SAC-style gaussian actor (issue 10's row): MLP 256-256 to a mean and a log-std, the mean
    squashed by tanh, the log-std clamped and exponentiated (the deterministic outputs, side by
    side in one tensor)."""

    def __init__(self, obs=64, act=6, hidden=256):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(obs, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                 nn.Linear(hidden, 2 * act))

    def forward(self, x):
        mean, log_std = self.mlp(x).chunk(2, -1)
        return torch.cat([torch.tanh(mean), torch.exp(torch.clamp(log_std, -5, 2))], -1)


def case(name):
    """(module, inputs, flops or None)"""
    torch.manual_seed(0)
    r = torch.randn
    if name == "mm_563":
        return MatMul(), (r(563, 512), r(512, 512)), 2 * 563 * 512 * 512
    if name == "mm_563x1":
        return MatMul(), (r(563, 1, 512), r(512, 512)), 2 * 563 * 512 * 512
    if name == "mm_563_const_b":
        return Linear(512, 512), (r(563, 512),), 2 * 563 * 512 * 512
    if name == "mm_1024":
        return MatMul(), (r(1024, 1024), r(1024, 1024)), 2 * 1024 ** 3
    if name == "tdmpc_q":  # 563 candidates (512 samples + 51 policy trajectories, as in the issue)
        return QEnsemble().eval(), (r(563, 512), r(563, 6)), None
    if name == "sac_actor":
        return SacActor().eval(), (r(1, 64),), None
    if name in ("transformer", "unet1d", "mlp"):
        model, inputs = policies.case(name)
        return model.eval(), inputs, None
    if name in ("mobilenet_v2", "resnet18"):
        return build(name), (r(1, 3, 224, 224),), None
    raise SystemExit(f"unknown case {name}")


def ncnn_in_child(name, tmp, threads, vulkan, runs, warmup):
    """ncnn_time for case `name` in a child process (this script with --ncnn-child): its
    (ms, err), or a string saying how it failed (a crash in ncnn or pnnx included)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--ncnn-child", name, tmp, str(threads), str(int(vulkan)),
           str(runs), str(warmup)]
    return child_result(cmd, 900)


def child_result(cmd, timeout):
    """Runs an ncnn child process (its last stdout line a JSON object: ms and err, or error):
    (ms, err), or a string saying how it failed (a crash or a timeout included)."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timed out"
    last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    if r.returncode == 0 and last.startswith("{"):
        j = json.loads(last)
        return (j["ms"], j["err"]) if "ms" in j else j["error"]
    return f"crashed (exit code {r.returncode}): {r.stderr.strip()[-200:]}"


def ncnn_time(model, inputs, tmp, name, threads, vulkan, runs, warmup, half=False):
    """(median ms, max |ncnn - torch| / max |torch|) of ncnn on a pnnx conversion of model;
    raises where ncnn, pnnx or the conversion fails. On its Vulkan path ncnn computes in fp32
    (fp16 storage and arithmetic off), or with `half` in its defaults (fp16 storage and
    arithmetic where the device has them: its fastest GPU mode)."""
    import ncnn
    import pnnx
    base = os.path.join(tmp, "ncnn_" + name)
    if not os.path.exists(base + ".ncnn.param"):
        saved = os.dup(1), os.dup(2)  # pnnx's converter prints every pass
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1), os.dup2(null, 2)
        try:
            pnnx.export(model, base + ".pt", tuple(inputs))
        finally:
            os.dup2(saved[0], 1), os.dup2(saved[1], 2)
            os.close(null), os.close(saved[0]), os.close(saved[1])
    net = ncnn.Net()
    net.opt.num_threads = threads
    net.opt.use_vulkan_compute = vulkan
    if vulkan and not half:
        net.opt.use_fp16_packed = net.opt.use_fp16_storage = net.opt.use_fp16_arithmetic = False
    if net.load_param(base + ".ncnn.param") or net.load_model(base + ".ncnn.bin"):
        raise RuntimeError("ncnn could not load the converted model")
    mats = [t.numpy().squeeze(0) if t.dim() > 1 and t.shape[0] == 1 else t.numpy() for t in inputs]

    def run():
        with net.create_extractor() as ex:
            for i, m in enumerate(mats):
                ex.input(f"in{i}", ncnn.Mat(np.ascontiguousarray(m)).clone())
            _, out = ex.extract("out0")
            return np.array(out)
    ms = timed(run, runs, warmup)
    with torch.no_grad():
        ref = model(*inputs).numpy()
    got = run().reshape(-1)
    err = float(np.max(np.abs(got - ref.reshape(-1))) / max(float(np.max(np.abs(ref))), 1e-30)) \
        if got.size == ref.size else float("inf")
    net.clear()
    return ms, err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vkinfer")
    ap.add_argument("--cases", default="mm_563,mm_563x1,mm_563_const_b,mm_1024,transformer,unet1d,mlp,mobilenet_v2,resnet18")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds of every peer; medians of the rounds")
    ap.add_argument("--markdown")
    ap.add_argument("--no-ncnn", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases.split(","):
            model, inputs, flops = case(name)
            names = [f"in{i}" for i in range(len(inputs))]
            path = os.path.join(tmp, name + ".onnx")
            export_onnx(model, inputs, path, names, ["out"], 13)
            cmd = [args.vkinfer, "bench", path, "--runs", str(args.runs), "--warmup", str(args.warmup), "--json"]
            for n, t in zip(names, inputs):
                np.save(os.path.join(tmp, n + ".npy"), t.numpy())
                cmd += ["--input", f"{n}={os.path.join(tmp, n + '.npy')}"]
            row = {"case": name, "flops": flops}
            sess = None
            if ort is not None:
                so = ort.SessionOptions()
                so.intra_op_num_threads = args.threads
                so.inter_op_num_threads = 1
                sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
                feed = {n: t.numpy() for n, t in zip(names, inputs)}
            times = {"torch_ms": [], "ort_ms": [], "vkinfer_ms": [], "vkinfer_2x_ms": [], "vkinfer_inline_ms": []}
            for rnd in range(args.rounds):
                with torch.no_grad():
                    times["torch_ms"].append(timed(lambda: model(*inputs), args.runs, args.warmup))
                if sess is not None:
                    times["ort_ms"].append(timed(lambda: sess.run(None, feed), args.runs, args.warmup))
                # lavapipe's compute threads: one per core (LP_NUM_THREADS = --threads), two per
                # core (what vkinfer chooses for larger models on 2 cores), and none (--cpu-threads
                # 0: each dispatch on its submit thread)
                for key, extra in (("vkinfer_ms", ["--cpu-threads", str(args.threads)]),
                                   ("vkinfer_2x_ms", ["--cpu-threads", str(2 * args.threads)]),
                                   ("vkinfer_inline_ms", ["--cpu-threads", "0"])):
                    profile = ["--profile"] if rnd == 0 and key == "vkinfer_ms" else []
                    bench = subprocess.run(cmd + extra + profile, capture_output=True, text=True)
                    if bench.returncode == 0:
                        b = json.loads(bench.stdout.strip().splitlines()[-1])
                        times[key].append(b["median_ms"])
                        if profile:
                            row.update({"vkinfer_gpu_ms": b.get("gpu_total_ms"), "device": b["device"]})
                    else:
                        row["vkinfer_error"] = (bench.stderr or bench.stdout).strip()[-300:]
            for key, values in times.items():
                if values:
                    row[key] = float(np.median(values))
            for key, vulkan in (("ncnn_cpu_ms", False), ("ncnn_vulkan_ms", True)):
                if args.no_ncnn:
                    break
                result = ncnn_in_child(name, tmp, args.threads, vulkan, args.runs, args.warmup)
                if isinstance(result, tuple):
                    row[key], row[key.replace("_ms", "_err")] = result
                else:
                    row[key.replace("_ms", "_error")] = result[:120]
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    dev = next((r["device"] for r in rows if "device" in r), "?")
    lines = [f"Machine: {platform.node()}, {os.cpu_count()} CPU cores, {args.threads} threads each; vkinfer device: {dev}; "
             f"torch {torch.__version__}" + (f", onnxruntime {ort.__version__}" if ort else ", no onnxruntime")
             + f"; medians of {args.runs} runs after {args.warmup} warm-up, the median of {args.rounds} alternating rounds.",
             "",
             f"| case | vkinfer ms ({args.threads} lavapipe threads) | vkinfer ms ({2 * args.threads} threads) "
             "| vkinfer ms (--cpu-threads 0) | (device ms, profiled run) "
             "| onnxruntime ms | PyTorch ms | ncnn CPU ms | ncnn Vulkan fp32 ms (lavapipe) | vkinfer GFLOP/s | onnxruntime GFLOP/s "
             "| PyTorch GFLOP/s | better vkinfer / onnxruntime | better vkinfer / ncnn Vulkan |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        def ms(k):
            return f"{r[k]:.2f}" if r.get(k) is not None else "-"

        def gf(k):
            return f"{r['flops'] / r[k] / 1e6:.1f}" if r["flops"] and r.get(k) else "-"
        best = min((r[k] for k in ("vkinfer_ms", "vkinfer_2x_ms", "vkinfer_inline_ms") if r.get(k)), default=None)
        r["vkinfer_best_ms"] = best
        ratio = f"{best / r['ort_ms']:.1f}x" if best and r.get("ort_ms") else "-"
        vk = ms("vkinfer_ms") if "vkinfer_ms" in r else "error: " + r.get("vkinfer_error", "")[:60]
        def nc(k):  # ncnn's time, with its error against PyTorch where it is not small
            if r.get(k) is None:
                return "-" if not r.get(k.replace("_ms", "_error")) else "failed"
            e = r.get(k.replace("_ms", "_err"), 0)
            if e == float("inf"):
                return f"{r[k]:.2f} (output of another size: not comparable)"
            return f"{r[k]:.2f}" + (f" (rel. err {e:.1e})" if e > 1e-3 else "")
        ok = r.get("ncnn_vulkan_ms") and r.get("ncnn_vulkan_err", 0) <= 1e-2
        nratio = f"{best / r['ncnn_vulkan_ms']:.2f}x" if best and ok else "-"
        lines.append(f"| {r['case']} | {vk} | {ms('vkinfer_2x_ms')} | {ms('vkinfer_inline_ms')} | {ms('vkinfer_gpu_ms')} | {ms('ort_ms')} | "
                     f"{ms('torch_ms')} | {nc('ncnn_cpu_ms')} | {nc('ncnn_vulkan_ms')} | {gf('vkinfer_best_ms')} | {gf('ort_ms')} | "
                     f"{gf('torch_ms')} | {ratio} | {nratio} |")
    failed = [(r["case"], k, r[k]) for r in rows for k in ("ncnn_cpu_error", "ncnn_vulkan_error") if r.get(k)]
    if failed:
        lines += ["", "ncnn did not run: " + "; ".join(f"{c} ({k.split('_')[1]}): {e}" for c, k, e in failed)]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        open(args.markdown, "w").write(text)
    return 0 if all("vkinfer_ms" in r for r in rows) else 1


def ncnn_child(argv):
    """--ncnn-child NAME TMP THREADS VULKAN RUNS WARMUP: one ncnn measurement, as JSON"""
    name, tmp, threads, vulkan, runs, warmup = argv
    torch.set_num_threads(int(threads))
    model, inputs, _ = case(name)
    try:
        ms, err = ncnn_time(model, inputs, tmp, name, int(threads), vulkan == "1", int(runs), int(warmup))
        print(json.dumps({"ms": ms, "err": err}))
    except Exception as e:  # noqa: BLE001  reported by the parent
        text = str(e).strip()
        print(json.dumps({"error": text.splitlines()[0] if text else type(e).__name__}))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--ncnn-child":
        sys.exit(ncnn_child(sys.argv[2:]))
    sys.exit(main())
