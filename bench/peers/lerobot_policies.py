#!/usr/bin/env python3
"""LeRobot's own policies (lerobot 0.6.1, random weights, batch 1) on vkinfer and on PyTorch,
per graph and per action chunk: issue 6's policy rows.

    python3 bench/peers/lerobot_policies.py VKINFER [--policies act,diffusion,vqbet] [--runs 30] [--warmup 10]
        [--markdown OUT.md] [--keep DIR]

Each policy is built from its config class (no pretrained backbone, no download), put in eval
mode, and the graph that runs once per action chunk is exported with torch.onnx.export's default
(the dynamo exporter on torch >= 2.9; the TorchScript one, opset 17, where that fails, which the
table says):
- act: ACTPolicy.model on one 480x640 camera and a 14-dim state, chunk 100 (LeRobot's ALOHA
  defaults: resnet18, 4 encoder layers, 1 decoder layer, dim 512);
- diffusion: DiffusionPolicy on one 96x96 camera and a 2-dim state, 2 observation steps, horizon
  16 (the PushT shape): the observation encoder (`_prepare_global_conditioning`) and one U-Net
  denoising step (`unet(sample, t, global_cond)`) as two graphs; a chunk is the encoder plus
  `num_inference_steps` (100) denoising steps, timed as that sum for every peer (the scheduler's
  arithmetic between steps is not in it);
- vqbet: VQBeTPolicy's model in rollout on one 96x96 camera and a 2-dim state, 5 observation
  steps (the PushT shape), codes chosen greedily (torch.multinomial replaced by argmax, so that
  the graph and PyTorch agree).
Not here: TD-MPC (its planning loop samples on the host between graphs) and SAC.
Peers: PyTorch CUDA eager fp32 and a CUDA graph replay of the same module (where capture
works: ACT builds host tensors inside forward), TF32 off. vkinfer's output is compared with eager fp32's.
lerobot is not a dependency of the project: on a machine without network, carry its wheel and its
few missing pure-Python dependencies (`pip download lerobot==0.6.1 --no-deps --python-version 3.12
--only-binary=:all:` and the same for draccus, einops, gymnasium, huggingface-hub, safetensors,
termcolor, diffusers with their dependencies) and install them with `pip install --no-index
--find-links DIR`."""
import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import traceback

import numpy as np
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from compare import rel_err, write_table  # noqa: E402
from gpu_peers import eager_and_graph, vkinfer_output, vkinfer_time  # noqa: E402


class ActChunk(nn.Module):
    """ACT's model on (state, image): the (1, chunk, action_dim) action chunk."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, state, image):
        return self.model({"observation.state": state, "observation.images": [image]})[0]


class VqbetRollout(nn.Module):
    """VQ-BeT's model in rollout: the (1, action_chunk_size, action_dim) chunk."""

    def __init__(self, vqbet):
        super().__init__()
        self.vqbet = vqbet

    def forward(self, state, images):
        return self.vqbet({"observation.state": state, "observation.images": images}, rollout=True)


def greedy_multinomial(probs, num_samples, **_):
    """torch.multinomial as greedy decoding (the likeliest code), which an exported graph and
    PyTorch then compute alike."""
    return probs.argmax(-1, keepdim=True).expand(*probs.shape[:-1], num_samples)


class DiffusionEncoder(nn.Module):
    def __init__(self, diffusion):
        super().__init__()
        self.diffusion = diffusion

    def forward(self, state, images):
        return self.diffusion._prepare_global_conditioning({"observation.state": state, "observation.images": images})


class DiffusionStep(nn.Module):
    def __init__(self, unet):
        super().__init__()
        self.unet = unet

    def forward(self, sample, timestep, cond):
        return self.unet(sample, timestep, global_cond=cond)


def torch_fp32_peers(module, inputs, runs, warmup):
    """PyTorch CUDA eager fp32 and a CUDA graph replay of it (where capture works), host to host."""
    out = eager_and_graph(module.to("cuda").eval(), [t.pin_memory() for t in inputs], runs, warmup)
    module.to("cpu")
    return out


def build(name):
    """[(graph name, module, example inputs, how many times a chunk runs it)]"""
    from lerobot.configs.types import FeatureType, PolicyFeature

    torch.manual_seed(0)
    if name == "act":
        from lerobot.policies.act.configuration_act import ACTConfig
        from lerobot.policies.act.modeling_act import ACTPolicy

        cfg = ACTConfig(input_features={"observation.state": PolicyFeature(FeatureType.STATE, (14,)),
                                        "observation.images.top": PolicyFeature(FeatureType.VISUAL, (3, 480, 640))},
                        output_features={"action": PolicyFeature(FeatureType.ACTION, (14,))},
                        pretrained_backbone_weights=None, device="cpu")
        policy = ACTPolicy(cfg).eval()
        return [("act", ActChunk(policy.model).eval(), (torch.randn(1, 14), torch.rand(1, 3, 480, 640)), 1)]
    if name == "diffusion":
        from lerobot.policies.diffusion.configuration_diffusion import DiffusionConfig
        from lerobot.policies.diffusion.modeling_diffusion import DiffusionPolicy

        cfg = DiffusionConfig(input_features={"observation.state": PolicyFeature(FeatureType.STATE, (2,)),
                                              "observation.image": PolicyFeature(FeatureType.VISUAL, (3, 96, 96))},
                              output_features={"action": PolicyFeature(FeatureType.ACTION, (2,))},
                              pretrained_backbone_weights=None, horizon=16, n_action_steps=8, device="cpu")
        policy = DiffusionPolicy(cfg).eval()
        d = policy.diffusion
        n_obs = cfg.n_obs_steps
        enc = DiffusionEncoder(d).eval()
        state, images = torch.randn(1, n_obs, 2), torch.rand(1, n_obs, 1, 3, 96, 96)
        with torch.no_grad():
            cond = enc(state, images)
        steps = d.num_inference_steps
        return [("diffusion encoder", enc, (state, images), 1),
                ("diffusion U-Net step", DiffusionStep(d.unet).eval(),
                 (torch.randn(1, cfg.horizon, 2), torch.tensor([steps - 1], dtype=torch.long), cond), steps)]
    if name == "vqbet":
        from lerobot.policies.vqbet.configuration_vqbet import VQBeTConfig
        from lerobot.policies.vqbet.modeling_vqbet import VQBeTPolicy

        cfg = VQBeTConfig(input_features={"observation.state": PolicyFeature(FeatureType.STATE, (2,)),
                                          "observation.image": PolicyFeature(FeatureType.VISUAL, (3, 96, 96))},
                          output_features={"action": PolicyFeature(FeatureType.ACTION, (2,))},
                          pretrained_backbone_weights=None, device="cpu")
        policy = VQBeTPolicy(cfg).eval()
        torch.multinomial = greedy_multinomial  # greedy rollout, in eager and in the export alike
        n_obs = cfg.n_obs_steps
        return [("vqbet", VqbetRollout(policy.vqbet).eval(), (torch.randn(1, n_obs, 2), torch.rand(1, n_obs, 1, 3, 96, 96)), 1)]
    raise ValueError(f"unknown policy {name}")


def export(module, inputs, path, names):
    """torch.onnx.export's default exporter, else the TorchScript one: the one that worked."""
    try:
        torch.onnx.export(module, inputs, path, input_names=names, output_names=["out"])
        return "default"
    except Exception as err:  # noqa: BLE001  the dynamo exporter can fail where TorchScript works
        print(f"  default exporter failed: {type(err).__name__}: {str(err).splitlines()[0][:200]}", flush=True)
    torch.onnx.export(module, inputs, path, input_names=names, output_names=["out"], opset_version=17, dynamo=False)
    return "TorchScript"


COLS = ["vkinfer", "eager fp32", "CUDA graph fp32"]


def measure(a, gname, module, inputs, times, ref, tmp, acc):
    """One graph exported into folder tmp and timed on every peer: its table row. Adds its
    share of a chunk to acc (None where a peer has no time for it, or the export failed)."""
    path = os.path.join(tmp, "m.onnx")
    names = [f"in{i}" for i in range(len(inputs))]
    try:
        how = export(module, inputs, path, names)
    except Exception as err:  # noqa: BLE001
        acc.update(dict.fromkeys(COLS))
        return f"| {gname} | failed: {type(err).__name__} | {times} | - | | | | | |"
    feeds = []
    for n, t in zip(names, inputs):
        feeds.append((n, os.path.join(tmp, n + ".npy")))
        np.save(feeds[-1][1], t.numpy())
    if a.graphs:
        dst = os.path.join(a.graphs, gname.replace(" ", "_"))
        os.makedirs(dst, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(HERE, "onnx_weights.py"), "strip", path, os.path.join(dst, "m.onnx")])
        for _, p in feeds:
            shutil.copy(p, dst)
    vk, dispatches = vkinfer_time(a.vkinfer, path, feeds, a.runs, a.warmup)
    err = rel_err(vkinfer_output(a.vkinfer, path, feeds, tmp), ref)
    peers = {}
    if torch.cuda.is_available():
        try:
            peers = torch_fp32_peers(module, inputs, a.runs, a.warmup)
        except Exception as e:  # noqa: BLE001
            print(f"  torch peers: {type(e).__name__}: {e}", flush=True)
    row = {"vkinfer": vk, **peers}
    for k in COLS:  # a chunk's time only where every graph of the policy has one
        acc[k] = acc[k] + row[k] * times if acc[k] is not None and row.get(k) else None
    best = min([v for v in peers.values() if v] or [0])
    ratio = f"{vk / best:.2f}x" if vk and best else "-"
    cells = [f"{row[c]:.2f}" if row.get(c) else "-" for c in COLS]
    return f"| {gname} | {how} | {times} | " + " | ".join(cells) + f" | {ratio} | {err:.1e} | {dispatches or '-'} |"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("vkinfer")
    ap.add_argument("--policies", default="act,diffusion,vqbet")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--markdown")
    ap.add_argument("--keep", help="keep each exported graph and its inputs under this folder")
    ap.add_argument("--graphs", help="write each graph without its large weights (bench/peers/onnx_weights.py strip) "
                                     "and its inputs under this folder, to time it on another machine")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    import lerobot
    lines = [f"lerobot {getattr(lerobot, '__version__', '?')}, torch {torch.__version__}", "",
             "| graph | exporter | runs a chunk | " + " | ".join(COLS) + " | vkinfer / best peer | max rel. err | dispatches |",
             "|---" * (len(COLS) + 6) + "|"]
    chunk = {}
    for name in a.policies.split(","):
        try:
            graphs = build(name)
        except Exception:  # noqa: BLE001  report and go on with the next policy
            traceback.print_exc()
            lines.append(f"| {name} | - | - | build failed | | | | | |")
            continue
        for gname, module, inputs, times in graphs:
            with torch.no_grad():
                ref = module(*inputs).numpy().astype(np.float64)
            keep = os.path.join(a.keep, gname.replace(" ", "_")) if a.keep else None
            if keep:
                os.makedirs(keep, exist_ok=True)
            with contextlib.nullcontext(keep) if keep else tempfile.TemporaryDirectory() as tmp:
                lines.append(measure(a, gname, module, inputs, times, ref, tmp, chunk.setdefault(name, dict.fromkeys(COLS, 0.0))))
            print(lines[-1], flush=True)
    lines += ["", "| policy, per action chunk (ms) | " + " | ".join(COLS) + " |", "|---" * (len(COLS) + 1) + "|"]
    for name, row in chunk.items():
        lines.append(f"| {name} | " + " | ".join(f"{row[c]:.2f}" if row.get(c) else "-" for c in COLS) + " |")
    write_table(lines, a.markdown)


if __name__ == "__main__":
    main()
