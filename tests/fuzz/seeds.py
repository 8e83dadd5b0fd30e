"""Seed corpora for the fuzz targets: models and tensors from ONNX's test data, .npy files of
every dtype and layout the reader takes.

    seeds.py ONNX_TESTDATA OUT_DIR"""
import glob
import os
import shutil
import sys

import numpy as np

data, out = sys.argv[1], sys.argv[2]
for sub in ("model", "tensor", "npy"):
    os.makedirs(os.path.join(out, sub), exist_ok=True)
models = sorted(glob.glob(os.path.join(data, "node", "*", "model.onnx")))
models += sorted(glob.glob(os.path.join(data, "pytorch-converted", "*", "model.onnx")))
for i, m in enumerate(models):
    if os.path.getsize(m) < 200_000:
        shutil.copy(m, os.path.join(out, "model", f"{i:04d}.onnx"))
for i, t in enumerate(sorted(glob.glob(os.path.join(data, "node", "*", "test_data_set_0", "*.pb")))[:400]):
    shutil.copy(t, os.path.join(out, "tensor", f"{i:04d}.pb"))
rng = np.random.default_rng(0)
arrays = [rng.standard_normal((2, 3), dtype=np.float32), np.arange(6, dtype=np.int64).reshape(3, 2),
          np.asfortranarray(rng.standard_normal((3, 4))), np.array(True), np.zeros((0, 5), np.float16),
          np.arange(8, dtype=np.uint8), np.arange(4, dtype=">i4"), rng.standard_normal((1, 2, 3, 4)).astype(np.float16)]
for i, a in enumerate(arrays):
    np.save(os.path.join(out, "npy", f"{i}.npy"), a)
print(f"seeds: {len(os.listdir(os.path.join(out, 'model')))} models, "
      f"{len(os.listdir(os.path.join(out, 'tensor')))} tensors, {len(arrays)} npy")
