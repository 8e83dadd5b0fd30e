#!/usr/bin/python3
"""Draws a `vkinfer bench --json` result: a histogram of run latencies and, when the JSON has
a profile (bench --profile), GPU time per op type.

    python3 tools/plot_bench.py BENCH.json OUT.png
`vkinfer bench --plot OUT.png` runs this same script (embedded in the program). Exit status:
0 drawn, 2 usage, 3 matplotlib missing, 4 unreadable JSON.
"""
import json
import sys


def main(argv):
    if len(argv) != 3:
        print("usage: plot_bench.py BENCH.json OUT.png", file=sys.stderr)
        return 2
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only, no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        print("vkinfer: --plot needs matplotlib for python3 (Debian: apt install python3-matplotlib; "
              "elsewhere: pip install matplotlib); the numbers are in `vkinfer bench --json`", file=sys.stderr)
        return 3
    try:
        with open(argv[1]) as f:
            bench = json.load(f)
        times = bench["times_ms"]
    except (OSError, ValueError, KeyError) as e:
        print(f"vkinfer: plot_bench.py: cannot read {argv[1]}: {e}", file=sys.stderr)
        return 4
    by_op = bench.get("gpu_ms_by_op") or {}
    fig, axes = plt.subplots(1, 2 if by_op else 1, figsize=(13 if by_op else 7, 4.5))
    ax = axes[0] if by_op else axes
    ax.hist(times, bins=min(50, max(5, len(times) // 3)), color="#4878a8")
    for name, style in (("median_ms", "-"), ("p90_ms", "--"), ("p99_ms", ":")):
        if name in bench:
            ax.axvline(bench[name], color="black", linestyle=style, label=f"{name[:-3]} {bench[name]:.3f} ms")
    ax.set_xlabel("run latency (ms): upload + GPU + download")
    ax.set_ylabel("runs")
    ax.set_title(f"{bench.get('model', '')}, batch {bench.get('batch', '?')}: {len(times)} runs", fontsize=9)
    ax.legend(fontsize=8)
    if by_op:
        ops = sorted(by_op.items(), key=lambda kv: kv[1])[-20:]  # the 20 largest, largest on top
        axes[1].barh([k for k, _ in ops], [v for _, v in ops], color="#d08040")
        axes[1].set_xlabel("GPU time per run (ms)")
        axes[1].set_title(f"GPU time by op type ({bench.get('gpu_total_ms', 0):.3f} ms in all)", fontsize=9)
        axes[1].tick_params(axis="y", labelsize=8)
    fig.suptitle(bench.get("device", ""), fontsize=9)
    fig.tight_layout()
    fig.savefig(argv[2], dpi=110)
    print(f"wrote {argv[2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
