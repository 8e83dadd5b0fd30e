"""Writes the ONNX 1.23 node tests kept here as fixtures (model.onnx + test_data_set_0), so that
Attention, RMSNormalization and RotaryEmbedding are tested without the 1.23 tree. Regenerate:

    /work/venv-onnx123/bin/python tests/onnx123/make_fixtures.py tests/onnx123"""
import os
import sys
import warnings

warnings.filterwarnings("ignore")
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402
from onnx.backend.test.case.node import collect_testcases  # noqa: E402

KEEP = {
    "test_attention_4d_gqa_with_past_and_present",           # GQA, KV cache, float mask
    "test_attention_3d_with_past_and_present_qk_matmul_softmax",  # 3-D heads, qk_matmul_output mode 3
    "test_attention_4d_causal_bf16",                         # bf16 rounding
    "test_attention_4d_gqa_causal_nonpad_decode_fp16",       # fp16, nonpad_kv_seqlen, decode
    "test_attention_4d_causal_nonpad_attn_mask_composition", # bool mask + causal + nonpad
    "test_attention_4d_softcap_neginf_mask_poison",          # softcap with -inf mask
    "test_attention_23_fullymasked_qk_matmul_output_mode3_zero",  # fully masked rows are 0
    "test_attention_local_window_with_past",                 # window (opset 25) after a cache
    "test_rms_normalization_3d_axis1_epsilon",
    "test_rotary_embedding_3d_input",
    "test_rotary_embedding_with_interleaved_rotary_dim",
}
out = sys.argv[1]
for case in collect_testcases(None):
    if case.name not in KEEP:
        continue
    d = os.path.join(out, case.name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(case.model, os.path.join(d, "model.onnx"))
    ins, outs = case.data_sets[0]
    for kind, values, infos in (("input", ins, case.model.graph.input), ("output", outs, case.model.graph.output)):
        for j, a in enumerate(values):
            t = numpy_helper.from_array(a, infos[j].name)
            with open(os.path.join(d, "test_data_set_0", f"{kind}_{j}.pb"), "wb") as f:
                f.write(t.SerializeToString())
