#!/usr/bin/env python3
"""Writes ONNX's node test cases as the backend test data tree ONNX ships:

    OUT/<test>/model.onnx
    OUT/<test>/test_data_set_0/input_K.pb, output_K.pb

The cases come from the installed onnx wheel's case generators
(onnx.backend.test.case.node.collect_testcases); each value is written as
onnx.backend.test.cmd_tools.generate_data writes the model tests': a TensorProto, or a
SequenceProto / OptionalProto / MapProto where the graph's input or output has that type.

    python onnx_node_tests.py OUT

Writes into OUT.tmp, then renames it to OUT, and writes OUT/.complete last; prints the
number of cases and the onnx version."""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx.backend.test.case.node import collect_testcases


def serialize(value, value_info):
    t = value_info.type
    if t.HasField("map_type"):
        return numpy_helper.from_dict(value, value_info.name).SerializeToString()
    if t.HasField("sequence_type"):
        return numpy_helper.from_list(value, value_info.name).SerializeToString()
    if t.HasField("optional_type"):
        return numpy_helper.from_optional(value, value_info.name).SerializeToString()
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(np.asarray(value), value_info.name).SerializeToString()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: onnx_node_tests.py OUT")
    out = sys.argv[1]
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    np.random.seed(0)  # the generators draw random inputs: the same tree on every machine
    cases = collect_testcases(None)
    for case in cases:
        assert case.kind == "node" and case.model is not None and case.data_sets
        d = os.path.join(tmp, case.name)
        os.makedirs(d)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        graph = case.model.graph
        for i, (inputs, outputs) in enumerate(case.data_sets):
            s = os.path.join(d, f"test_data_set_{i}")
            os.makedirs(s)
            for j, value in enumerate(inputs):
                with open(os.path.join(s, f"input_{j}.pb"), "wb") as f:
                    f.write(serialize(value, graph.input[j]))
            for j, value in enumerate(outputs):
                with open(os.path.join(s, f"output_{j}.pb"), "wb") as f:
                    f.write(serialize(value, graph.output[j]))
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    with open(os.path.join(out, ".complete"), "w") as f:
        f.write(f"onnx {onnx.__version__}: {len(cases)} node tests\n")
    print(f"onnx {onnx.__version__}: {len(cases)} node tests written to {out}")


if __name__ == "__main__":
    main()
