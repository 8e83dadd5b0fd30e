# lavapipe on the lent machine's CPU cores: vkinfer against onnxruntime and PyTorch CPU with all
# cores, then lavapipe's pool at one and two threads per core. Run from the repository root:
#   . bench/tuning/lvp_env.sh; VKINFER=build/vkinfer bash bench/tuning/lvp_cores.sh OUT [CASES]
# .lvp holds: mesa-vulkan-drivers libllvm15 libz3-4 libdrm2 libsensors5 libxcb-dri3-0
# libxcb-present0 libxcb-sync1 libxcb-xfixes0 libxshmfence1 libxcb-randr0 libwayland-client0
# libx11-xcb1 libxcb1 libxau6 libxdmcp6 libbsd0 libmd0 libffi8 libedit2 libtinfo6 libxml2 libicu72
# liblzma5 libzstd1 libelf1 libdrm-amdgpu1 libexpat1 (Debian 12 .debs, 49 MB; `apt-get download`).
# Prepared in session 25 for the lent GPU machine's 16 cores; not yet run there (no machine was lent).
VKINFER=${VKINFER:-build/vkinfer}
OUT=${1:-/tmp/lvpout}; CASES=${2:-mm_563,mm_1024,transformer,mlp,mobilenet_v2,resnet18}
mkdir -p $OUT
T=$(nproc)
{ nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|MHz"; ./$VKINFER devices | head -2;
  python3 -c "import torch, onnxruntime as o; print('torch', torch.__version__, 'onnxruntime', o.__version__)"; } 2>&1 | tee $OUT/machine.txt
python3 - <<'PY' 2>&1 | tail -2
import torch, torchvision
for n in ("mobilenet_v2", "resnet18"):
    m = getattr(torchvision.models, n)().eval()
    torch.onnx.export(m, torch.randn(1, 3, 224, 224), f"/tmp/{n}.onnx", dynamo=False, input_names=["in0"])
print("exported")
PY
for r in 1 2; do for m in mobilenet_v2 resnet18; do for t in $T $((2 * T)) 0; do
  printf "%s threads %s: " $m $t; ./$VKINFER bench /tmp/$m.onnx --random-inputs --cpu-threads $t --runs 10 --warmup 2 2>&1 | grep latency
done; done; done 2>&1 | tee $OUT/pool.txt
timeout 400 python3 bench/peers/compare_cpu.py $VKINFER --threads $T --rounds 2 --runs 10 --warmup 2 --no-ncnn --cases $CASES --markdown $OUT/cmp.md 2>&1 | tail -20
