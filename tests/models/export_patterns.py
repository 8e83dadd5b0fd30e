"""Patterns that PyTorch exports of real models hit and that ONNX's node tests lack, compared
with eager PyTorch: ACT's 300-way Split (TorchScript exporter) and the Dropout in training
mode with ratio 0 of torchvision's transformers (F.dropout's training defaults to true).

    export_patterns.py VKINFER CASE     CASE: split300, dropout_train0"""
import sys
import tempfile

import numpy as np
import onnx
import torch

from torch_export import run_exported


class Split300(torch.nn.Module):
    def forward(self, x):
        parts = torch.split(x, 1, dim=1)  # one Split node with 300 outputs
        return torch.cat([p * (i + 1) for i, p in enumerate(parts)], dim=1)


class DropoutTrainZero(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.dropout(x, p=0.0) * 2  # Dropout(x, 0, training_mode=true)


CASES = {
    "split300": (Split300(), lambda g: any(n.op_type == "Split" and len(n.output) == 300 for n in g.node), (2, 300, 4)),
    "dropout_train0": (DropoutTrainZero(), lambda g: any(n.op_type == "Dropout" for n in g.node), (3, 5, 7)),
}

vkinfer, case = sys.argv[1], sys.argv[2]
model, has_pattern, shape = CASES[case]
x = torch.randn(*shape, generator=torch.Generator().manual_seed(0))
with torch.no_grad():
    want = model(x).numpy()
tmp = tempfile.mkdtemp()
run, got = run_exported(vkinfer, model, (x,), tmp, 13)
if not has_pattern(onnx.load(f"{tmp}/model.onnx").graph):
    sys.exit(f"FAIL {case}: the export does not contain the pattern under test")
if got is None:
    sys.exit(f"FAIL {case}: vkinfer run failed")
err = float(np.max(np.abs(got - want)))
print(f"{case}: max abs error {err:.3g}")
sys.exit(0 if got.shape == want.shape and err <= 1e-5 else 1)
