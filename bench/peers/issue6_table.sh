#!/bin/bash
# Issue 6's table in one command on a CUDA machine (run from the repository root):
#   bench/peers/issue6_table.sh VKINFER OUT_DIR
# writes OUT_DIR/issue6.md: the machine (GPU, driver, Vulkan device, versions), then
# 1. bench/peers/gpu_peers.py: vkinfer against PyTorch CUDA eager fp32 and fp16, a CUDA graph replay,
#    torch.compile(mode="reduce-overhead"), onnxruntime CPU and PyTorch CPU with CPU_THREADS
#    threads (default: every core), and ncnn through Vulkan where `import ncnn, pnnx` works;
# 2. bench/peers/lerobot_policies.py: LeRobot's own policies per graph and per action chunk, where
#    `import lerobot` works (else the table says it was not run).
# MODELS (default: gpu_peers.py's list), RUNS (50) and WARMUP (10) choose what runs; PARTS
# ("peers lerobot") runs one part alone, for machines whose calls are time-limited: run the
# parts in turn with the same OUT_DIR and the file gathers what each wrote.
# Packages missing on the machine can come as wheels: PYTHONPATH=DIR (pip install --target DIR).
# Docs: docs/results-h200.md holds the newest table this wrote on the H200.
set -u
VK=${1:?usage: bench/peers/issue6_table.sh VKINFER OUT_DIR}
OUT=${2:?usage: bench/peers/issue6_table.sh VKINFER OUT_DIR}
PY=${PYTHON:-python3}
RUNS=${RUNS:-50}
WARMUP=${WARMUP:-10}
PARTS=${PARTS:-peers lerobot}
THREADS=${CPU_THREADS:-$(nproc)}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{
    gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)
    echo "Machine: ${gpu:-no nvidia-smi}, $(nproc) CPU cores; $(date -u +%Y-%m-%d)"
    "$VK" --version 2>&1 | head -1
    "$VK" devices 2>&1 | grep '\*' | head -1
    $PY - <<'EOF'
import importlib
parts = []
for m in ("torch", "onnxruntime", "ncnn", "pnnx", "lerobot"):
    try:
        mod = importlib.import_module(m)
        v = getattr(mod, "__version__", "?")
        if m == "torch":
            v += f" (CUDA {mod.version.cuda}, TF32 off in the runs)"
        parts.append(f"{m} {v}")
    except Exception as e:  # noqa: BLE001
        parts.append(f"{m}: not importable ({type(e).__name__})")
print("; ".join(parts))
EOF
} > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
status=0
for part in $PARTS; do
    case $part in
    peers)
        extra=()
        if $PY -c "import ncnn, pnnx" 2>/dev/null; then extra+=(--ncnn --half); fi
        models=()
        if [ -n "${MODELS:-}" ]; then models=(--models "$MODELS"); fi
        $PY bench/peers/gpu_peers.py "$VK" "${models[@]}" --runs "$RUNS" --warmup "$WARMUP" --cpu-peers "$THREADS" "${extra[@]}" \
            --markdown "$OUT/peers${MODELS:+_$(echo "$MODELS" | tr ',' '_' | cut -c1-40)}.md" || status=1
        ;;
    lerobot)
        if $PY -c "import lerobot" 2>/dev/null; then
            $PY bench/peers/lerobot_policies.py "$VK" --runs "${LEROBOT_RUNS:-30}" --warmup 10 --markdown "$OUT/lerobot.md" || status=1
        else
            echo "LeRobot's policies not run: lerobot is not importable here (bench/peers/lerobot_policies.py says how to carry it)" \
                > "$OUT/lerobot.md"
        fi
        ;;
    *) echo "unknown part $part"; status=1 ;;
    esac
done
{
    echo "# Issue 6's table ($(date -u +%Y-%m-%d))"
    echo
    cat "$OUT/machine.txt"
    echo
    echo "Median ms host to host (vkinfer bench: input upload + GPU + output download; PyTorch's inputs from pinned host memory, outputs back to the host), seeded random weights; errors are vkinfer's against PyTorch eager fp32."
    for f in "$OUT"/peers*.md; do [ -f "$f" ] && { echo; cat "$f"; }; done
    if [ -f "$OUT/lerobot.md" ]; then echo; echo "LeRobot's policies (bench/peers/lerobot_policies.py):"; echo; cat "$OUT/lerobot.md"; fi
} > "$OUT/issue6.md"
echo "wrote $OUT/issue6.md"
exit $status
