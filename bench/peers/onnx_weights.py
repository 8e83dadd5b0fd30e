#!/usr/bin/env python3
"""Moves a model between machines without its weights: `strip` writes the graph with every large
float initializer emptied (its name, dtype and dims kept), `fill` writes it back with seeded
random values of a fan-in scale. What runs on the second machine is the same graph with other
weights: good for timing and for comparing runtimes on it, not for comparing with the first
machine's outputs.

    python3 bench/peers/onnx_weights.py strip IN.onnx OUT.onnx [--min-elements 65536]
    python3 bench/peers/onnx_weights.py fill IN.onnx OUT.onnx [--seed 0]

Integer, boolean and small float initializers (shapes, indices, biases, norms' statistics, the
scalars of decomposed ops) keep their data; `fill` writes the weights into OUT.onnx.data."""
import argparse
import os

import numpy as np
import onnx
from onnx import numpy_helper

FLOATS = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16, onnx.TensorProto.DOUBLE}
STRIPPED = "vkinfer_stripped"  # doc_string of an emptied initializer


def strip(src, dst, min_elements):
    m = onnx.load(src)
    n = 0
    for t in m.graph.initializer:
        if t.data_type in FLOATS and int(np.prod(t.dims)) >= min_elements:
            t.ClearField("raw_data")
            t.ClearField("float_data")
            t.ClearField("int32_data")
            t.data_location = onnx.TensorProto.DEFAULT
            del t.external_data[:]
            t.doc_string = STRIPPED
            n += 1
    onnx.save(m, dst)
    print(f"{dst}: {n} initializers emptied, {os.path.getsize(dst)} bytes")


def fill(src, dst, seed):
    m = onnx.load(src)
    rng = np.random.default_rng(seed)
    n = 0
    for i, t in enumerate(m.graph.initializer):
        if t.doc_string != STRIPPED:
            continue
        dims = tuple(t.dims)
        fan_in = int(np.prod(dims[1:])) if len(dims) >= 3 else dims[0] if dims else 1
        v = rng.standard_normal(dims).astype(np.float32) / np.sqrt(max(fan_in, 1))
        if t.data_type == onnx.TensorProto.BFLOAT16:
            raise SystemExit(f"{t.name}: bfloat16 weights are not filled by this tool")
        dt = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.FLOAT16: np.float16,
              onnx.TensorProto.DOUBLE: np.float64}[t.data_type]
        new = numpy_helper.from_array(v.astype(dt), t.name)
        m.graph.initializer[i].CopyFrom(new)
        n += 1
    onnx.save(m, dst, save_as_external_data=True, all_tensors_to_one_file=True,
              location=os.path.basename(dst) + ".data", size_threshold=1024)
    print(f"{dst}: {n} initializers filled (seed {seed})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["strip", "fill"])
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--min-elements", type=int, default=65536)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if a.mode == "strip":
        strip(a.src, a.dst, a.min_elements)
    else:
        fill(a.src, a.dst, a.seed)


if __name__ == "__main__":
    main()
