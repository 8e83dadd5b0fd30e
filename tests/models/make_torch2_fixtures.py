#!/usr/bin/env python3
"""Writes tests/models/torch2/: small models exported by a current PyTorch (run on a machine with
torch 2.x, e.g. the GPU machine's torch 2.11), with their inputs and PyTorch's outputs, so that CI
(Debian's torch 1.13, which has only the TorchScript exporter of its time) runs what today's
exporters emit: torch 2's TorchScript exporter (nn.MultiheadAttention's packed q/k/v split:
Reshape, Unsqueeze, Transpose, Squeeze, three Gathers) and the default dynamo exporter (opset
18+, weights in a separate .onnx.data file).

    python3 tests/models/make_torch2_fixtures.py OUT_DIR

Each case is a folder: model.onnx (and model.onnx.data for dynamo exports), in_K.npy, out_K.npy,
meta.json (input and output names, the exporter, the torch version). Seeded random weights."""
import json
import os
import sys

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from torch_export import export_onnx  # noqa: E402
import policies  # noqa: E402


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                               nn.Conv2d(8, 16, 3, padding=1, groups=2), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        return self.head(self.f(x).flatten(1))


def cases():
    torch.manual_seed(0)
    from torchvision.models.vision_transformer import VisionTransformer
    vit = VisionTransformer(image_size=32, patch_size=8, num_layers=1, num_heads=2, hidden_dim=32, mlp_dim=64)
    nn.init.normal_(vit.heads.head.weight, std=0.2)  # torchvision's head starts at zero
    nn.init.normal_(vit.heads.head.bias, std=0.2)
    yield "vit_mha_b1", vit, (torch.randn(1, 3, 32, 32),), "torchscript"
    layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True, activation="gelu")
    yield "encoder_b2", nn.TransformerEncoder(layer, 1, enable_nested_tensor=False), (torch.randn(2, 12, 32),), "torchscript"
    model, inputs = policies.case("transformer")
    yield "policy_transformer_dynamo", model, inputs, "dynamo"
    cnn = SmallCNN()
    for m in cnn.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    yield "cnn_dynamo", cnn, (torch.randn(2, 3, 16, 16),), "dynamo"


def main():
    out = sys.argv[1]
    import onnx
    for name, model, inputs, exporter in cases():
        model.eval()
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        with torch.no_grad():
            ref = model(*inputs)
        refs = ref if isinstance(ref, tuple) else (ref,)
        try:
            if exporter == "dynamo":
                torch.onnx.export(model, inputs, path, dynamo=True, external_data=True)
            else:
                export_onnx(model, inputs, path, [f"in_{k}" for k in range(len(inputs))],
                            [f"out_{k}" for k in range(len(refs))], 17)
        except Exception as e:  # reported, the other cases go on
            print(f"{name}: export failed: {type(e).__name__}: {e}")
            continue
        g = onnx.load(path, load_external_data=False).graph
        init = {t.name for t in g.initializer}
        in_names = [i.name for i in g.input if i.name not in init]
        out_names = [o.name for o in g.output]
        meta = {"exporter": exporter, "torch": torch.__version__, "opset": [o.version for o in
                onnx.load(path, load_external_data=False).opset_import if o.domain in ("", "ai.onnx")],
                "inputs": {}, "outputs": {}}
        for k, (n, t) in enumerate(zip(in_names, inputs)):
            np.save(os.path.join(d, f"in_{k}.npy"), t.numpy())
            meta["inputs"][n] = f"in_{k}.npy"
        for k, (n, t) in enumerate(zip(out_names, refs)):
            np.save(os.path.join(d, f"out_{k}.npy"), t.numpy())
            meta["outputs"][n] = f"out_{k}.npy"
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        print(name, exporter, sorted(os.listdir(d)), meta["opset"])


if __name__ == "__main__":
    main()
