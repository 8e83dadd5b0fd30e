#!/usr/bin/env python3
"""LeRobot 0.6.1's vision-language-action policies, built with seeded random weights and no hub
access, exported as one graph per action chunk (the denoising loop unrolled), run by vkinfer and
compared with PyTorch eager in the same dtype.

    python3 bench/peers/vla_policies.py export --policy smolvla --size full --dtype bf16 --out DIR
    python3 bench/peers/vla_policies.py run VKINFER --policy smolvla --size full --dtype bf16 [--runs 20]
    python3 bench/peers/vla_policies.py from_torch --policy smolvla --size tiny --dtype bf16

`export` writes DIR/<policy>_<size>_<dtype>.onnx (+ .onnx.data), the inputs it was exported on
(.npz) and eager PyTorch's action chunk for them; `run` exports (or reuses DIR), runs vkinfer on
the same inputs, prints max abs / rel error against eager and times both. `from_torch` runs the
policy through the Python package instead (vkinfer.from_torch: the export, the session and torch
tensors in and out in one call; libvkinfer as vkinfer._lib finds it, e.g. VKINFER_LIBRARY) and
compares its chunk with eager's.

Sizes: `full` is the published configuration (backbone sizes written below from the published
config.json of each backbone, built through transformers' own config classes, since nothing is
downloaded); `tiny` keeps the graph's structure at a few layers and widths for test fixtures.
Where a policy asks the hub for a processor, fixed token ids stand in for a tokenizer. Noise that
the policy would draw inside sample_actions is a graph input, so runs are deterministic.

Needs torch >= 2.9 (the dynamo exporter), transformers 5.4-5.5 and the lerobot 0.6.1 wheel
(`pip install --ignore-requires-python` works on Python 3.11 for the policies used here).

wall_x, fastwam, molmoact2 and lingbot_va build their hub-only parts (wall-oss-flow's
Qwen2.5-VL-MoE config, the Wan2.2 VAE and UMT5-XXL, MolmoAct2's ViT/LLM/expert configs) from
config classes with the sizes noted at each builder: unlike the others', those numbers were not
read from the published config.json files and may differ from them (wall_x's expert widths, the
Wan2.2 VAE's latent mean/std and MolmoAct2's text depth are not known here). Their tiny graphs
match eager in fp32 (rel. error ~1e-7). What each wrapper changes to make one chunk exportable
(fixed token positions / KV-cache slots / RoPE in real arithmetic) is written at the wrapper;
each was checked against the policy's own eager path (wall_x: predict(); molmoact2:
generate_actions_from_inputs; fastwam: infer_action with the original complex RoPE; lingbot_va:
_infer with the original cache and scheduler), identical or within 3e-7.

Not built here: none of LeRobot 0.6.1's policies at present (all four of wall_x, molmoact2,
lingbot_va and fastwam have builders; only `tiny` was exported and run, `full` constructed on the
meta device). Upstream wall_x's predict() fails in fp32 ("Index put requires the source and
destination dtypes match, got Float ... BFloat16": it casts the proprioception embedding to bf16
before writing it into fp32 embeddings); the wrapper casts it back, as bf16 loading makes it."""
import argparse
import contextlib
import os
import sys
import time
import types

import numpy as np
import torch
import torch.nn as nn

SEED = 0


def stub_missing(name):
    """An empty module for an import that lerobot makes at module level but that exporting never
    calls (OpenCV's video and image decoding): the lent GPU machine has no cv2, and its wheel is
    too large to carry."""
    try:
        __import__(name)
    except ImportError:
        sys.modules[name] = types.ModuleType(name)


stub_missing("cv2")
OPTIMIZE = os.environ.get("VLA_OPTIMIZE", "1") != "0"  # 0: skip onnxscript's optimizer (most of a full export's time)


# ----------------------------------------------------------------------------------------------
# smolvla: SmolVLM2-500M (SigLIP 512 px, 16 of 32 Llama-style text layers) + a 0.75x-wide action
# expert, cross attention every other layer, 10 Euler steps over a KV cache of the prefix.

def smolvlm_config(size):
    from transformers import SmolVLMConfig
    if size == "full":
        # HuggingFaceTB/SmolVLM2-500M-Video-Instruct's config.json
        text = dict(hidden_size=960, intermediate_size=2560, num_attention_heads=15, num_key_value_heads=5,
                    num_hidden_layers=32, head_dim=64, rms_norm_eps=1e-5, rope_theta=100000.0,
                    vocab_size=49280, max_position_embeddings=8192, tie_word_embeddings=False)
        vision = dict(hidden_size=768, intermediate_size=3072, num_attention_heads=12, num_hidden_layers=12,
                      patch_size=16, image_size=512)
        scale = 4
    else:
        text = dict(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2,
                    num_hidden_layers=4, head_dim=16, rms_norm_eps=1e-5, rope_theta=100000.0,
                    vocab_size=300, max_position_embeddings=512, tie_word_embeddings=False)
        vision = dict(hidden_size=32, intermediate_size=64, num_attention_heads=2, num_hidden_layers=2,
                      patch_size=8, image_size=32)
        scale = 2
    text["model_type"] = "llama"
    return SmolVLMConfig(text_config=text, vision_config=vision, scale_factor=scale, image_token_id=49190
                         if size == "full" else 290)


@contextlib.contextmanager
def offline_smolvlm(size):
    """AutoConfig/AutoProcessor.from_pretrained answer with the local config and a processor whose
    tokenizer has only the two ids SmolVLA reads."""
    import lerobot.policies.smolvla.smolvlm_with_expert as swe
    cfg = smolvlm_config(size)
    tok = types.SimpleNamespace(fake_image_token_id=cfg.image_token_id - 1, global_image_token_id=cfg.image_token_id - 2)
    saved = swe.AutoConfig, swe.AutoProcessor
    swe.AutoConfig = types.SimpleNamespace(from_pretrained=lambda *_a, **_k: cfg)
    swe.AutoProcessor = types.SimpleNamespace(from_pretrained=lambda *_a, **_k: types.SimpleNamespace(tokenizer=tok))
    try:
        yield cfg
    finally:
        swe.AutoConfig, swe.AutoProcessor = saved


class SmolVLAChunk(nn.Module):
    """(image, lang_tokens, lang_mask, state, noise) -> the (B, chunk, max_action_dim) chunk."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, image, lang_tokens, lang_mask, state, noise):
        img_mask = torch.ones(image.shape[0], dtype=torch.bool, device=image.device)
        return self.model.sample_actions([image], [img_mask], lang_tokens, lang_mask, state, noise=noise)


def build_smolvla(size):
    from lerobot.policies.smolvla.configuration_smolvla import SmolVLAConfig
    from lerobot.policies.smolvla.modeling_smolvla import VLAFlowMatching
    kw = dict(load_vlm_weights=False, device="cpu")
    if size == "tiny":
        kw.update(num_vlm_layers=4, chunk_size=8, n_action_steps=8, num_steps=3, max_state_dim=8, max_action_dim=6)
    cfg = SmolVLAConfig(**kw)
    with offline_smolvlm(size) as vcfg:
        model = VLAFlowMatching(cfg)
    img = vcfg.vision_config.image_size
    n_lang = cfg.tokenizer_max_length if size == "full" else 6
    g = torch.Generator().manual_seed(SEED + 1)
    inputs = dict(
        image=torch.rand(1, 3, img, img, generator=g) * 2 - 1,
        lang_tokens=torch.randint(0, vcfg.text_config.vocab_size - 100, (1, n_lang), generator=g),
        lang_mask=torch.ones(1, n_lang, dtype=torch.bool),
        state=torch.randn(1, cfg.max_state_dim, generator=g),
        noise=torch.randn(1, cfg.chunk_size, cfg.max_action_dim, generator=g),
    )
    return SmolVLAChunk(model), inputs


def smolvla_bf16(chunk):
    """As LeRobot loads SmolVLA: the VLM and the action expert in bf16 (attention scores and
    softmax upcast to fp32 inside), the state/action/time projections in fp32."""
    chunk.model.vlm_with_expert.to(torch.bfloat16)


# ----------------------------------------------------------------------------------------------
# pi0: PaliGemma 3B (SigLIP so400m at 224 px, Gemma 2B, 18 layers) + a Gemma-300M action expert,
# 10 Euler steps over the prefix's KV cache; three cameras and 48 language tokens make an
# 816-token prefix. LeRobot builds it from config alone (no hub); bf16 is its `dtype` option,
# which keeps the vision tower, the projector and the norms in fp32.

@contextlib.contextmanager
def tiny_paligemma(module="lerobot.policies.pi0.modeling_pi0"):
    """pi0's configs shrunk: Gemma widths and depths, and a SigLIP of 2 layers at 32 px whose
    intermediate size and projection LeRobot's constructor cannot overwrite. `module` is the
    modeling file whose get_gemma_config/CONFIG_MAPPING are replaced (pi0's, pi05's, pi0_fast's)."""
    import importlib
    m = importlib.import_module(module)
    from transformers import AutoModel, PaliGemmaConfig, SiglipVisionConfig, SiglipVisionModel

    class FrozenVision(SiglipVisionConfig):
        def __setattr__(self, key, value):
            if key in ("intermediate_size", "projection_dim") and key in self.__dict__:
                return
            super().__setattr__(key, value)
    FrozenVision.__name__ = "SiglipVisionConfig"  # AutoModel.register compares class names
    AutoModel.register(FrozenVision, SiglipVisionModel, exist_ok=True)

    from transformers import GemmaConfig as HFGemmaConfig, GemmaModel

    class FrozenText(HFGemmaConfig):
        def __setattr__(self, key, value):
            if key == "vocab_size" and key in self.__dict__:
                return
            super().__setattr__(key, value)
    FrozenText.__name__ = "GemmaConfig"
    AutoModel.register(FrozenText, GemmaModel, exist_ok=True)

    def paligemma():
        cfg = PaliGemmaConfig()
        cfg.text_config = FrozenText(**{**cfg.text_config.to_dict(), "vocab_size": 256})
        vision = FrozenVision(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                              patch_size=8, image_size=32)
        vision.projection_dim = 64
        cfg.vision_config = vision
        return cfg

    saved_cfg, saved_map = m.get_gemma_config, m.CONFIG_MAPPING
    m.get_gemma_config = lambda variant: m.GemmaConfig(width=64 if variant == "gemma_2b" else 32, depth=2,
                                                       mlp_dim=128 if variant == "gemma_2b" else 64, num_heads=4,
                                                       num_kv_heads=1, head_dim=16)
    m.CONFIG_MAPPING = {"paligemma": paligemma, "gemma": saved_map["gemma"]}
    try:
        yield
    finally:
        m.get_gemma_config, m.CONFIG_MAPPING = saved_cfg, saved_map


class Pi0Chunk(nn.Module):
    """(images (B, cameras, 3, H, W), lang_tokens, lang_mask, state, noise) -> the action chunk."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, images, lang_tokens, lang_mask, state, noise):
        cams = [images[:, i] for i in range(images.shape[1])]
        masks = [torch.ones(images.shape[0], dtype=torch.bool, device=images.device)] * len(cams)
        return self.model.sample_actions(cams, masks, lang_tokens, lang_mask, state, noise=noise)


def build_pi0(size, dtype="fp32"):
    from lerobot.policies.pi0.configuration_pi0 import PI0Config
    from lerobot.policies.pi0.modeling_pi0 import PI0Pytorch
    kw = dict(device="cpu", dtype="bfloat16" if dtype == "bf16" else "float32")
    cams, n_lang = 3, 48
    if size == "tiny":
        kw.update(chunk_size=8, n_action_steps=8, num_inference_steps=3, max_state_dim=8, max_action_dim=6,
                  image_resolution=(32, 32))
        cams, n_lang = 2, 6
    cfg = PI0Config(**kw)
    with tiny_paligemma() if size == "tiny" else contextlib.nullcontext():
        model = PI0Pytorch(cfg)
    res = cfg.image_resolution[0]
    g = torch.Generator().manual_seed(SEED + 1)
    inputs = dict(
        images=torch.rand(1, cams, 3, res, res, generator=g) * 2 - 1,
        lang_tokens=torch.randint(0, 250000 if size == "full" else 200, (1, n_lang), generator=g),
        lang_mask=torch.ones(1, n_lang, dtype=torch.bool),
        state=torch.randn(1, cfg.max_state_dim, generator=g),
        noise=torch.randn(1, cfg.chunk_size, cfg.max_action_dim, generator=g),
    )
    return Pi0Chunk(model), inputs


# ----------------------------------------------------------------------------------------------
# pi05: pi0's PaliGemma 3B + Gemma-300M expert, but the state enters as discretized tokens of the
# 200-token prompt (no state projection) and the flow time conditions the expert through adaptive
# RMSNorm (adaRMS: scale, shift and gate per layer from the time embedding). Same sizes as pi0
# (LeRobot's get_gemma_config: gemma_2b width 2048 x 18, mlp 16384, 8 heads / 1 KV head of 256;
# gemma_300m width 1024 x 18, mlp 4096), 10 Euler steps, chunk 50, 3 cameras at 224 px.

class Pi05Chunk(nn.Module):
    """(images (B, cameras, 3, H, W), tokens, token_mask, noise) -> the action chunk."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, images, tokens, token_mask, noise):
        cams = [images[:, i] for i in range(images.shape[1])]
        masks = [torch.ones(images.shape[0], dtype=torch.bool, device=images.device)] * len(cams)
        return self.model.sample_actions(cams, masks, tokens, token_mask, noise=noise)


def build_pi05(size, dtype="fp32"):
    from lerobot.policies.pi05.configuration_pi05 import PI05Config
    from lerobot.policies.pi05.modeling_pi05 import PI05Pytorch
    kw = dict(device="cpu", dtype="bfloat16" if dtype == "bf16" else "float32")
    cams, n_tok = 3, 200  # tokenizer_max_length: the prompt with the discretized state
    if size == "tiny":
        kw.update(chunk_size=8, n_action_steps=8, num_inference_steps=3, max_state_dim=8, max_action_dim=6,
                  image_resolution=(32, 32), tokenizer_max_length=10)
        cams, n_tok = 2, 10
    cfg = PI05Config(**kw)
    with tiny_paligemma("lerobot.policies.pi05.modeling_pi05") if size == "tiny" else contextlib.nullcontext():
        model = PI05Pytorch(cfg)
    res = cfg.image_resolution[0]
    g = torch.Generator().manual_seed(SEED + 1)
    inputs = dict(
        images=torch.rand(1, cams, 3, res, res, generator=g) * 2 - 1,
        tokens=torch.randint(0, 250000 if size == "full" else 200, (1, n_tok), generator=g),
        token_mask=torch.ones(1, n_tok, dtype=torch.bool),
        noise=torch.randn(1, cfg.chunk_size, cfg.max_action_dim, generator=g),
    )
    return Pi05Chunk(model), inputs


# ----------------------------------------------------------------------------------------------
# pi0_fast: PaliGemma 3B alone (no action expert), decoding FAST action tokens greedily with a KV
# cache: a prefill over [3 cameras, 200 prompt tokens, BOS], then max_decoding_steps (256) single
# token steps, each an lm_head over the 257152-token vocabulary and an argmax fed back through the
# embedding. The graph's output is the (B, 256) token ids; turning them into the (50, 32) chunk is
# the FAST tokenizer's BPE decode and an inverse DCT on the host (scipy, as LeRobot does it), which
# needs the hub's tokenizer and has no tensor form. No noise: greedy decoding is deterministic.

class Pi0FastChunk(nn.Module):
    """(images (B, cameras, 3, H, W), tokens, token_mask) -> the (B, max_decoding_steps) greedy token
    ids. LeRobot's sample_actions_fast_kv_cache with temperature 0, minus its early stop (`if
    bool(finished.all()): break` once every row has emitted the end-of-action "|", a data-dependent
    branch torch.export cannot trace): all max_decoding_steps are decoded. The ids up to the first
    "|" are the same; detokenize_actions cuts there anyway."""

    def __init__(self, model, steps):
        super().__init__()
        self.model = model
        self.steps = steps

    def forward(self, images, tokens, token_mask):
        from lerobot.policies.common.vla_utils import prepare_attention_masks_4d
        m, pg = self.model, self.model.paligemma_with_expert
        b = tokens.shape[0]
        cams = [images[:, i] for i in range(images.shape[1])]
        img_masks = [torch.ones(b, dtype=torch.bool, device=images.device)] * len(cams)
        bos = torch.full((b, 1), m._paligemma_tokenizer.bos_token_id, dtype=torch.long, device=tokens.device)
        tokens = torch.cat([tokens, bos], dim=1)
        token_mask = torch.cat([token_mask, torch.ones(b, 1, dtype=torch.bool, device=tokens.device)], dim=1)
        embs, pad, att, _, _ = m.embed_prefix_fast(cams, img_masks, tokens, token_mask)
        wdtype = pg.paligemma.model.language_model.layers[0].self_attn.q_proj.weight.dtype
        embs = embs.to(wdtype)
        (out, _), cache = pg.forward(attention_mask=prepare_attention_masks_4d(att, dtype=embs.dtype),
                                     position_ids=torch.cumsum(pad, dim=1) - 1, past_key_values=None,
                                     inputs_embeds=[embs, None], use_cache=True, adarms_cond=[None, None])
        lm_head = pg.paligemma.lm_head
        nxt = torch.argmax(lm_head(out[:, -1:, :])[:, -1], dim=-1, keepdim=True)
        ids = [nxt]
        for _ in range(1, self.steps):
            emb = pg.embed_language_tokens(nxt).to(wdtype)
            pad = torch.cat([pad, torch.ones(b, 1, dtype=torch.bool, device=pad.device)], dim=1)
            pos = (torch.sum(pad, dim=1, keepdim=True) - 1).long()
            (out, _), cache = pg.forward(attention_mask=prepare_attention_masks_4d(pad.unsqueeze(1), dtype=emb.dtype),
                                         position_ids=pos, past_key_values=cache, inputs_embeds=[emb, None],
                                         use_cache=True, adarms_cond=[None, None])
            nxt = torch.argmax(lm_head(out[:, -1:, :])[:, -1], dim=-1, keepdim=True)
            ids.append(nxt)
        return torch.cat(ids, dim=1)


def build_pi0_fast(size, dtype="fp32"):
    from lerobot.policies.pi0_fast.configuration_pi0_fast import PI0FastConfig
    from lerobot.policies.pi0_fast.modeling_pi0_fast import PI0FastPytorch
    kw = dict(device="cpu", dtype="bfloat16" if dtype == "bf16" else "float32")
    cams, n_tok = 3, 200
    if size == "tiny":
        kw.update(chunk_size=8, n_action_steps=8, max_state_dim=8, max_action_dim=6, image_resolution=(32, 32),
                  tokenizer_max_length=10, max_action_tokens=4, max_decoding_steps=4)
        cams, n_tok = 2, 10
    cfg = PI0FastConfig(**kw)
    tok = types.SimpleNamespace(bos_token_id=2)  # Gemma's <bos> (pad 0, eos 1, bos 2)
    with tiny_paligemma("lerobot.policies.pi0_fast.modeling_pi0_fast") if size == "tiny" else contextlib.nullcontext():
        model = PI0FastPytorch(cfg, paligemma_tokenizer=tok)
    res = cfg.image_resolution[0]
    g = torch.Generator().manual_seed(SEED + 1)
    inputs = dict(
        images=torch.rand(1, cams, 3, res, res, generator=g) * 2 - 1,
        tokens=torch.randint(0, 250000 if size == "full" else 200, (1, n_tok), generator=g),
        token_mask=torch.ones(1, n_tok, dtype=torch.bool),
    )
    return Pi0FastChunk(model, cfg.max_decoding_steps), inputs


# ----------------------------------------------------------------------------------------------
# xvla: X-VLA-0.9B (lerobot/xvla-base): Florence-2-large's DaViT (4 stages, dims 256-2048, depths
# 1/1/9/1, window 12) on each of 3 views at 224 px, its BART-large encoder (12 layers, d 1024,
# 16 heads, ffn 4096, vocab 51289) over [primary view's tokens, 64 text tokens], then a 24-layer,
# 1024-wide soft-prompted transformer (32 prompts per domain, 30 domains) over [30 action tokens,
# encoder output, the other views' tokens], 10 flow steps, ee6d actions (20-D). Sizes from the
# florence_config of 2toINF/X-VLA-WidowX's config.json (the same as lerobot/xvla-base's, as far as
# known), chunk 30 as in lerobot/xvla-base fine-tunes' configs; the 224 px input is their
# resize_imgs_with_padding (empty cameras are 3x224x224 there), so 224 is likely but not certain.

def florence_config(size):
    from transformers import Florence2Config
    if size == "full":
        vision = dict(depths=[1, 1, 9, 1], patch_size=[7, 3, 3, 3], patch_stride=[4, 2, 2, 2], patch_padding=[3, 1, 1, 1],
                      patch_prenorm=[False, True, True, True], embed_dim=[256, 512, 1024, 2048],
                      num_heads=[8, 16, 32, 64], num_groups=[8, 16, 32, 64], window_size=12, projection_dim=1024,
                      max_position_embeddings=50, max_temporal_embeddings=100)
        text = dict(model_type="bart", vocab_size=51289, d_model=1024, encoder_layers=12, decoder_layers=12,
                    encoder_attention_heads=16, decoder_attention_heads=16, encoder_ffn_dim=4096, decoder_ffn_dim=4096,
                    max_position_embeddings=4096, activation_function="gelu")
    else:
        vision = dict(depths=[1, 1, 1, 1], patch_size=[7, 3, 3, 3], patch_stride=[4, 2, 2, 2], patch_padding=[3, 1, 1, 1],
                      patch_prenorm=[False, True, True, True], embed_dim=[8, 16, 16, 32], num_heads=[1, 2, 2, 4],
                      num_groups=[1, 2, 2, 4], window_size=3, projection_dim=32, max_position_embeddings=50,
                      max_temporal_embeddings=100)
        text = dict(model_type="bart", vocab_size=300, d_model=32, encoder_layers=2, decoder_layers=1,
                    encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                    max_position_embeddings=128, activation_function="gelu")
    return Florence2Config(vision_config=vision, text_config=text, pad_token_id=1, bos_token_id=0, eos_token_id=2)


class XVLAChunk(nn.Module):
    """(input_ids, images (B, views, 3, H, W), domain_id, proprio, noise) -> the (B, chunk, 20) chunk.
    LeRobot's XVLAModel.generate_actions with two changes: the noise x1 is an input instead of
    torch.randn inside, and every view is taken as valid (forward_vlm selects the valid views with
    `int(mask.sum().item())` and boolean indexing, data-dependent shapes torch.export cannot trace;
    with all views present that selection is the identity)."""

    def __init__(self, model, steps):
        super().__init__()
        self.model = model
        self.steps = steps

    def forward(self, input_ids, images, domain_id, proprio, noise):
        m = self.model
        b, views = images.shape[:2]
        feats = m.vlm.get_image_features(images.flatten(0, 1)).pooler_output
        feats = feats.view(b, views, *feats.shape[1:])
        merged = torch.cat([feats[:, 0], m.vlm.get_input_embeddings()(input_ids)], dim=1)
        enc = m.vlm.language_model.encoder(attention_mask=torch.ones(merged.shape[:2], dtype=torch.long, device=merged.device),
                                           inputs_embeds=merged)[0]
        aux = feats[:, 1:].reshape(b, -1, feats.shape[-1])
        action = torch.zeros_like(noise)
        for i in range(self.steps, 0, -1):
            t = torch.full((b,), i / self.steps, device=noise.device, dtype=noise.dtype)
            x_t = noise * t.view(-1, 1, 1) + action * (1 - t).view(-1, 1, 1)
            proprio_m, x_t_m = m.action_space.preprocess(proprio, x_t)
            action = m.transformer(domain_id=domain_id, action_with_noise=x_t_m, proprio=proprio_m, t=t,
                                   vlm_features=enc, aux_visual_inputs=aux)
        return m.action_space.postprocess(action)


def build_xvla(size, dtype="fp32"):
    from lerobot.policies.xvla.configuration_xvla import XVLAConfig
    from lerobot.policies.xvla.modeling_xvla import XVLAModel
    kw = dict(device="cpu", dtype="bfloat16" if dtype == "bf16" else "float32", chunk_size=30, n_action_steps=30)
    views, res, n_tok = 3, 224, 64
    if size == "tiny":
        kw.update(chunk_size=8, n_action_steps=8, hidden_size=32, depth=2, num_heads=2, num_domains=3,
                  len_soft_prompts=4, dim_time=8, max_len_seq=128, num_denoising_steps=3, max_state_dim=20)  # ee6d zeroes proprio[9, 19]
        views, res, n_tok = 2, 64, 6
    cfg = XVLAConfig(**kw)
    model = XVLAModel(cfg, florence_config(size), proprio_dim=cfg.max_state_dim)
    if dtype == "bf16":
        # In bfloat16, eager X-VLA fails as LeRobot 0.6.1 and transformers 5.5.4 write it ("expected
        # m1 and m2 to have the same dtype"): Florence-2's projector adds float32 position
        # embeddings to the image features, and the action encoder concatenates a float32
        # timestep embedding to the tokens. Each Linear's input is cast to its weight's dtype, as
        # autocast would (DomainAwareLinear keeps its weights in nn.Embedding tables).
        def cast_input(m, a):
            w = next(m.parameters())
            return tuple(t.to(w.dtype) if torch.is_tensor(t) and t.is_floating_point() else t for t in a)
        for mod in model.modules():
            if isinstance(mod, nn.Linear) or type(mod).__name__ == "DomainAwareLinear":
                mod.register_forward_pre_hook(cast_input)
    g = torch.Generator().manual_seed(SEED + 1)
    inputs = dict(
        input_ids=torch.randint(3, 51000 if size == "full" else 290, (1, n_tok), generator=g),
        images=torch.rand(1, views, 3, res, res, generator=g),  # ImageNet-normalized upstream
        domain_id=torch.tensor([1]),
        proprio=torch.randn(1, cfg.max_state_dim, generator=g),
        noise=torch.randn(1, cfg.chunk_size, model.dim_action, generator=g),
    )
    return XVLAChunk(model, cfg.num_denoising_steps), inputs


# ----------------------------------------------------------------------------------------------
# groot: GR00T N1.7 (nvidia/GR00T-N1.7-3B): Cosmos-Reason2-2B (a Qwen3-VL-2B: SigLIP-2-style ViT of
# 24 layers at patch 16 with DeepStack taps after blocks 5/11/17, a 28-layer 2048-wide Qwen3 text
# model of which the first select_layer=16 are kept) feeding a 4-layer self-attention VL block and
# a 32-layer AlternateVLDiT (32 heads x 48, cross-attention alternating over text and image tokens)
# that runs 4 flow steps over [state token, 40 action tokens] of 132-D. LeRobot hard-codes the
# Cosmos-Reason2-2B config (groot_n1_7._cosmos_reason2_qwen3_vl_config) and builds it with no hub
# access (load_backbone_weights=False); the N1.7 head sizes are its GR00T_N1_7_DEFAULTS. Images:
# 2 views at 256x256 (N1.7's image_target_size; the Qwen3-VL processor keeps 256, a multiple of
# 32), 16x16 patches -> 64 tokens each; 32 prompt tokens. The view count and the prompt length are
# choices here, not published values.

def qwen3vl_tiny_config():
    from transformers import Qwen3VLConfig
    return Qwen3VLConfig(
        image_token_id=290, video_token_id=291, vision_start_token_id=292, vision_end_token_id=293,
        tie_word_embeddings=True,
        text_config=dict(head_dim=16, hidden_act="silu", hidden_size=64, intermediate_size=128,
                         max_position_embeddings=1024, model_type="qwen3_vl_text", num_attention_heads=4,
                         num_hidden_layers=4, num_key_value_heads=2, rms_norm_eps=1e-6,
                         rope_scaling=dict(mrope_interleaved=True, mrope_section=[4, 2, 2], rope_type="default"),
                         rope_theta=5000000, tie_word_embeddings=True, vocab_size=300),
        vision_config=dict(deepstack_visual_indexes=[0], depth=2, hidden_act="gelu_pytorch_tanh", hidden_size=32,
                           in_channels=3, intermediate_size=64, model_type="qwen3_vl", num_heads=2,
                           num_position_embeddings=64, out_hidden_size=64, patch_size=8, spatial_merge_size=2,
                           temporal_patch_size=2))


def qwen3vl_last_layer(qwen, grid, cu_seqlens, pixel_values, input_ids, attention_mask, position_ids):
    """A Qwen3VLModel's forward up to its last decoder layer's output (before the final norm, as GR00T
    N1.7 and VLA-JEPA read it), with the image grid and cu_seqlens given as numpy arrays so that the
    vision tower's .tolist() calls are static under torch.export: (hidden (B, L, D), image_mask)."""
    vis, lm = qwen.visual, qwen.language_model
    h = vis.patch_embed(pixel_values.type(vis.dtype)) + vis.fast_pos_embed_interpolate(grid)
    rot = vis.rot_pos_emb(grid).reshape(h.shape[0], -1)
    emb = torch.cat((rot, rot), dim=-1)
    pe = (emb.cos(), emb.sin())
    deep = []
    for i, blk in enumerate(vis.blocks):
        h = blk(h, cu_seqlens=cu_seqlens, position_embeddings=pe)
        if i in vis.deepstack_visual_indexes:
            deep.append(vis.deepstack_merger_list[vis.deepstack_visual_indexes.index(i)](h))
    image_embeds = vis.merger(h)
    embeds = qwen.get_input_embeddings()(input_ids)
    image_mask = (input_ids == qwen.config.image_token_id)
    embeds = embeds.masked_scatter(image_mask.unsqueeze(-1).expand_as(embeds), image_embeds.to(embeds.dtype))
    captured = {}
    hook = lm.layers[-1].register_forward_hook(lambda _m, _i, out: captured.__setitem__(
        "h", out if isinstance(out, torch.Tensor) else out[0]))
    try:
        lm(inputs_embeds=embeds, attention_mask=attention_mask, position_ids=position_ids,
           visual_pos_masks=image_mask, deepstack_visual_embeds=deep, use_cache=False)
    finally:
        hook.remove()
    return captured["h"], image_mask


def qwen3vl_layout(qwen, views, grid, segments):
    """input_ids for `views` images of `grid` (t, h, w patches) as the Qwen3-VL chat template lays them
    out (<|vision_start|> <|image_pad|>*n <|vision_end|> per image), followed by the token lists in
    `segments`; with the 4-row M-RoPE position_ids the N1.7 backbone feeds (the text row first).
    get_rope_index runs here, at build time, on the fixed layout."""
    cfg = qwen.config
    merge = cfg.vision_config.spatial_merge_size
    n_img = grid[0] * grid[1] * grid[2] // merge ** 2
    ids = []
    for _ in range(views):
        ids += [cfg.vision_start_token_id] + [cfg.image_token_id] * n_img + [cfg.vision_end_token_id]
    for seg in segments:
        ids += list(seg)
    input_ids = torch.tensor([ids])
    mm = (input_ids == cfg.image_token_id).int()
    attention_mask = torch.ones_like(input_ids)
    pos, _ = qwen.get_rope_index(input_ids, image_grid_thw=torch.tensor([grid] * views), attention_mask=attention_mask,
                                 mm_token_type_ids=mm)
    return input_ids, attention_mask, torch.cat([pos[:1], pos], dim=0)


class GrootChunk(nn.Module):
    """(pixel_values (patches, 3*2*P*P), input_ids, attention_mask, position_ids (4, B, L), state
    (B, 1, max_state_dim), embodiment_id, noise) -> the (B, 40, 132) chunk: GR00TN17.get_action, with
    the Qwen3-VL forward spelled out so that the image grid stays Python data. Qwen3VLVisionModel
    reads image_grid_thw with .tolist() (position tables, and its attention splits per image by
    cu_seqlens.tolist()), get_image_features splits by .tolist() too, and get_rope_index walks
    input_ids with itertools.groupby over .tolist(): on graph inputs all of these are data-dependent
    for torch.export. Here the grid and cu_seqlens are numpy arrays (their .tolist() is static),
    position_ids (M-RoPE, 4 rows as N1.7's Qwen3Backbone builds them) are computed from the fixed token
    layout at build time and passed in, and the noise is an input instead of torch.randn."""

    def __init__(self, model, grid, views):
        super().__init__()
        self.model = model
        self.grid = np.array([grid] * views)
        n = grid[0] * grid[1] * grid[2]
        self.cu_seqlens = np.arange(views + 1) * n

    def backbone(self, pixel_values, input_ids, attention_mask, position_ids):
        return qwen3vl_last_layer(self.model.backbone.model.model, self.grid, self.cu_seqlens, pixel_values,
                                  input_ids, attention_mask, position_ids)

    def forward(self, pixel_values, input_ids, attention_mask, position_ids, state, embodiment_id, noise):
        from transformers.feature_extraction_utils import BatchFeature
        head = self.model.action_head
        feats, image_mask = self.backbone(pixel_values, input_ids, attention_mask, position_ids)
        bout = BatchFeature(data=dict(backbone_features=feats, backbone_attention_mask=attention_mask == 1,
                                      image_mask=image_mask))
        ain = BatchFeature(data=dict(state=state, embodiment_id=embodiment_id))
        enc = head._encode_features(bout, ain)
        vl, sf = enc.backbone_features, enc.state_features
        actions, b, n = noise, noise.shape[0], head.num_inference_timesteps
        for step in range(n):
            tq = int(step / float(n) * head.num_timestep_buckets)
            ts = torch.full((b,), tq, device=noise.device)
            af = head.action_encoder(actions, ts, embodiment_id)
            if head.config.add_pos_embed:
                af = af + head.position_embedding(torch.arange(af.shape[1], device=noise.device)).unsqueeze(0)
            out = head.model(hidden_states=torch.cat((sf, af), dim=1), encoder_hidden_states=vl, timestep=ts,
                             image_mask=bout.image_mask, backbone_attention_mask=bout.backbone_attention_mask)
            pred = head.action_decoder(out, embodiment_id)
            actions = actions + (1.0 / n) * pred[:, -head.action_horizon:]
        return actions


def build_groot(size, dtype="fp32"):
    import lerobot.policies.groot.groot_n1_7 as g17
    over = {}
    views, res, n_text = 2, 256, 32
    if size == "tiny":
        over = dict(backbone_embedding_dim=64, select_layer=2, hidden_size=32, input_embedding_dim=32, max_state_dim=8,
                    max_action_dim=6, action_horizon=8, max_seq_len=64, max_num_embodiments=2,
                    num_inference_timesteps=3,
                    diffusion_model_cfg=dict(positional_embeddings=None, num_layers=4, num_attention_heads=2,
                                             attention_head_dim=16, norm_type="ada_norm", dropout=0.2,
                                             final_dropout=True, output_dim=32, interleave_self_attention=True),
                    vl_self_attention_cfg=dict(positional_embeddings=None, num_layers=1, num_attention_heads=2,
                                               attention_head_dim=32, dropout=0.2, final_dropout=True))
        views, res, n_text = 2, 32, 6
    cfg = g17.GR00TN17Config(**over)
    saved = g17._cosmos_reason2_qwen3_vl_config
    if size == "tiny":
        g17._cosmos_reason2_qwen3_vl_config = qwen3vl_tiny_config
    try:
        model = g17.GR00TN17(cfg, load_backbone_weights=False)
    finally:
        g17._cosmos_reason2_qwen3_vl_config = saved
    qcfg = model.backbone.model.config
    vc = qcfg.vision_config
    patch, merge, tps = vc.patch_size, vc.spatial_merge_size, vc.temporal_patch_size
    grid = [1, res // patch, res // patch]
    n_img = grid[1] * grid[2] // merge ** 2
    # token layout: per view <vision_start> <image>*n_img <vision_end>, then the prompt
    g = torch.Generator().manual_seed(SEED + 1)
    ids = []
    for _ in range(views):
        ids += [qcfg.vision_start_token_id] + [qcfg.image_token_id] * n_img + [qcfg.vision_end_token_id]
    text = torch.randint(10, 150000 if size == "full" else 280, (n_text,), generator=g).tolist()
    input_ids = torch.tensor([ids + text])
    mm = (input_ids == qcfg.image_token_id).int()
    attention_mask = torch.ones_like(input_ids)
    pos, _ = model.backbone.model.model.get_rope_index(input_ids, image_grid_thw=torch.tensor([grid] * views),
                                                      attention_mask=attention_mask, mm_token_type_ids=mm)
    pos = torch.cat([pos[:1], pos], dim=0)  # Qwen3Backbone._ensure_legacy_qwen3_position_ids' 4th row
    n_patches = views * grid[1] * grid[2]
    inputs = dict(
        pixel_values=torch.rand(n_patches, 3 * tps * patch * patch, generator=g) * 2 - 1,
        input_ids=input_ids,
        attention_mask=attention_mask,
        position_ids=pos,
        state=torch.randn(1, 1, cfg.max_state_dim, generator=g),
        embodiment_id=torch.tensor([1]),
        noise=torch.randn(1, cfg.action_horizon, cfg.max_action_dim, generator=g),
    )
    return GrootChunk(model, grid, views), inputs


# ----------------------------------------------------------------------------------------------
# evo1: EVO-1 on InternVL3-1B (InternViT-300M at 448 px, 256 tokens per view after the 0.5 pixel
# shuffle, Qwen2.5-0.5B text model cut to its first 14 of 24 layers) whose last hidden states over
# [3 views' image tokens, prompt] condition an 8-layer cross-attention flow head (embed 896,
# hidden 1024, 8 heads) that integrates 32 Euler steps over the flattened (50 x 24) chunk.
# InternVL3-1B-hf's config.json as known (not checked against the file): vision 24 layers, 1024
# wide, 16 heads, ffn 4096, patch 14, layer scale; text Qwen2 896 wide, 14 heads / 2 KV heads, ffn
# 4864, 24 layers, vocab 151674, rope theta 1e6; <img> 151665, </img> 151666, <IMG_CONTEXT> 151667.
# LeRobot loads tokenizer and model from the hub (AutoTokenizer/AutoModel.from_pretrained): both
# are patched to answer locally, and the prompt is given as token ids.

def internvl3_config(size):
    from transformers import InternVLConfig
    if size == "full":
        vision = dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096,
                      image_size=[448, 448], patch_size=[14, 14], norm_type="layer_norm", layer_scale_init_value=0.1,
                      use_mean_pooling=True, use_qk_norm=False)
        text = dict(model_type="qwen2", hidden_size=896, intermediate_size=4864, num_attention_heads=14,
                    num_key_value_heads=2, num_hidden_layers=24, vocab_size=151674, rope_theta=1000000.0,
                    max_position_embeddings=32768, rms_norm_eps=1e-6, tie_word_embeddings=True)
        ids = dict(image_token_id=151667, image_seq_length=256)
    else:
        vision = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                      image_size=[56, 56], patch_size=[14, 14], norm_type="layer_norm", layer_scale_init_value=0.1,
                      use_mean_pooling=True, use_qk_norm=False)
        text = dict(model_type="qwen2", hidden_size=64, intermediate_size=128, num_attention_heads=4,
                    num_key_value_heads=2, num_hidden_layers=4, vocab_size=300, rope_theta=1000000.0,
                    max_position_embeddings=1024, rms_norm_eps=1e-6, tie_word_embeddings=True)
        ids = dict(image_token_id=290, image_seq_length=4)
    cfg = InternVLConfig(vision_config=vision, text_config=text, downsample_ratio=0.5, projector_hidden_act="gelu",
                         vision_feature_layer=-1, vision_feature_select_strategy="default", **ids)
    cfg._attn_implementation = "eager"
    return cfg


@contextlib.contextmanager
def offline_internvl3(cfg):
    import lerobot.policies.evo1.internvl3_embedder as ie
    from transformers import InternVLModel
    tok = types.SimpleNamespace(convert_tokens_to_ids=lambda t: {"<IMG_CONTEXT>": cfg.image_token_id}[t])
    saved = ie.AutoTokenizer, ie.AutoModel
    ie.AutoTokenizer = types.SimpleNamespace(from_pretrained=lambda *_a, **_k: tok)
    ie.AutoModel = types.SimpleNamespace(from_pretrained=lambda *_a, torch_dtype=torch.float32, **_k:
                                         InternVLModel(cfg).to(torch_dtype))
    try:
        yield
    finally:
        ie.AutoTokenizer, ie.AutoModel = saved


class Evo1Chunk(nn.Module):
    """(pixel_values (views, 3, S, S) ImageNet-normalized, input_ids, attention_mask, state, noise)
    -> the (B, chunk, max_action_dim) chunk. The VLM call of InternVL3Embedder._forward_vlm on token
    ids (the tokenizer and the bicubic resize stay on the host), then LeRobot's unchanged
    FlowmatchingActionHead.get_action, whose starting point `torch.rand(...) * 2 - 1` is the graph
    input `noise` (uniform in [0, 1)) through a torch.rand replaced for the call."""

    def __init__(self, model, env_action_dim):
        super().__init__()
        self.model = model
        mask = torch.zeros(1, model.config.max_action_dim, dtype=torch.bool)
        mask[:, :env_action_dim] = True
        self.register_buffer("action_mask", mask, persistent=False)

    def forward(self, pixel_values, input_ids, attention_mask, state, noise):
        emb, head = self.model.embedder, self.model.action_head
        out = emb.model(input_ids=input_ids, pixel_values=pixel_values.to(emb.model_dtype), attention_mask=attention_mask,
                        output_hidden_states=True, return_dict=True)
        fused = out.hidden_states[-1].to(torch.float32)
        b = input_ids.shape[0]
        rand = torch.rand
        torch.rand = lambda *_a, **_k: noise.reshape(b, -1).to(fused.dtype)
        try:
            actions = head.get_action(fused, state=state, embodiment_id=torch.zeros(b, dtype=torch.long),
                                      action_mask=self.action_mask.expand(b, -1), context_mask=attention_mask.bool())
        finally:
            torch.rand = rand
        return actions.view(b, self.model.config.chunk_size, self.model.config.max_action_dim)


def build_evo1(size, dtype="fp32"):
    from lerobot.policies.evo1.configuration_evo1 import Evo1Config
    from lerobot.policies.evo1.evo1_model import Evo1Model
    vlm_dtype = "bfloat16" if dtype == "bf16" else "float32"
    kw = dict(device="cpu", vlm_dtype=vlm_dtype, use_flash_attn=False, enable_gradient_checkpointing=False)
    views, n_text, env_dim = 3, 16, 7  # 3 = max_views; a 7-D arm (env_dim) and 16 task tokens are choices here
    if size == "tiny":
        kw.update(chunk_size=8, n_action_steps=8, max_state_dim=8, max_action_dim=6, max_views=2,
                  image_resolution=(56, 56), vlm_num_layers=2, embed_dim=64, hidden_dim=64, state_hidden_dim=32,
                  num_heads=2, num_layers=2, num_inference_timesteps=3)
        views, n_text, env_dim = 2, 6, 4
    cfg = Evo1Config(**kw)
    vcfg = internvl3_config(size)
    with offline_internvl3(vcfg):
        model = Evo1Model(cfg)
    img_start, img_end = (151665, 151666) if size == "full" else (288, 289)
    g = torch.Generator().manual_seed(SEED + 1)
    text_hi = 151000 if size == "full" else 280
    ids = []
    for _ in range(views):  # "Image-i: <img><IMG_CONTEXT>*n</img>\n" + the task
        ids += torch.randint(10, text_hi, (3,), generator=g).tolist() + [img_start]
        ids += [vcfg.image_token_id] * vcfg.image_seq_length + [img_end, 198 if size == "full" else 11]
    ids += torch.randint(10, text_hi, (n_text,), generator=g).tolist()
    res = cfg.image_resolution[0]
    inputs = dict(
        pixel_values=torch.randn(views, 3, res, res, generator=g),
        input_ids=torch.tensor([ids]),
        attention_mask=torch.ones(1, len(ids), dtype=torch.long),
        state=torch.randn(1, cfg.max_state_dim, generator=g),
        noise=torch.rand(1, cfg.chunk_size, cfg.max_action_dim, generator=g),
    )
    return Evo1Chunk(model, env_dim), inputs


# ----------------------------------------------------------------------------------------------
# vla_jepa: VLA-JEPA: Qwen3-VL-2B-Instruct (all 28 text layers; the same layout as the
# Cosmos-Reason2-2B config LeRobot hard-codes for GR00T, reused here) whose last-layer states at
# the 32 <|embodied_action|> prompt tokens condition a DiT-B flow head (16 layers, 12 heads x 64,
# cross-attention every other layer) integrating 4 Euler steps over a 7 x 7 chunk. The V-JEPA 2
# world model (facebook/vjepa2-vitl-fpc64-256) is a training-time loss only and is not built
# (enable_world_model=False). LeRobot loads Qwen and its processor from the hub: both are patched
# (a tokenizer stub that adds the 28 action tokens and the embodied token after Qwen3's 151669
# ids; that count is as known, not checked). 2 views at 224 px (49 tokens each) and a 40-token
# instruction are choices here.

class _AddTokensTokenizer:
    """Enough of a tokenizer for Qwen3VLInterface.expand_tokenizer: new tokens get the next ids."""

    def __init__(self, n):
        self.n, self.vocab, self.padding_side = n, {}, "left"

    def get_vocab(self):
        return self.vocab

    def add_tokens(self, tokens, special_tokens=False):
        for t in tokens:
            self.vocab[t] = self.n
            self.n += 1

    def convert_tokens_to_ids(self, t):
        return self.vocab[t]

    def __len__(self):
        return self.n


class VlaJepaChunk(nn.Module):
    """(pixel_values, input_ids, attention_mask, position_ids, state, noise) -> the (B, chunk,
    action_dim) chunk. VLAJEPAModel.predict_action with the Qwen3-VL call spelled out as for groot
    (qwen3vl_last_layer: the processor's grid stays Python data), the embodied-action states taken
    at their fixed prompt positions (LeRobot finds them with .nonzero(), a data-dependent shape) and
    LeRobot's unchanged action head, whose torch.randn start is the `noise` input. In fp32 the
    backbone runs without LeRobot's bf16 autocast."""

    def __init__(self, model, grid, views, embodied):
        super().__init__()
        self.model = model
        self.grid = np.array([grid] * views)
        self.cu_seqlens = np.arange(views + 1) * (grid[0] * grid[1] * grid[2])
        self.embodied = embodied  # (first, count) of the <|embodied_action|> tokens

    def forward(self, pixel_values, input_ids, attention_mask, position_ids, state, noise):
        hidden, _ = qwen3vl_last_layer(self.model.qwen.model.model, self.grid, self.cu_seqlens, pixel_values, input_ids,
                                       attention_mask, position_ids)
        first, count = self.embodied
        cond = hidden[:, first:first + count].float()
        randn = torch.randn
        torch.randn = lambda *_a, **_k: noise.to(cond.dtype)
        try:
            return self.model.action_model.predict_action(cond, state.float())
        finally:
            torch.randn = randn


def build_vla_jepa(size, dtype="fp32"):
    import lerobot.policies.groot.groot_n1_7 as g17
    import lerobot.policies.vla_jepa.qwen_interface as qi
    from lerobot.policies.vla_jepa.configuration_vla_jepa import VLAJEPAConfig
    from lerobot.policies.vla_jepa.modeling_vla_jepa import VLAJEPAModel
    from transformers import Qwen3VLForConditionalGeneration
    kw = dict(device="cpu", enable_world_model=False, torch_dtype="bfloat16" if dtype == "bf16" else "float32")
    views, res, n_text = 2, 224, 40
    if size == "tiny":
        kw.update(chunk_size=4, n_action_steps=4, action_dim=4, state_dim=4, num_action_tokens_per_timestep=2,
                  num_embodied_action_tokens_per_instruction=4, num_inference_timesteps=3,
                  action_model_type="DiT-test", action_hidden_size=32, action_num_layers=2, num_video_frames=4)
        views, res, n_text = 2, 32, 6
    cfg = VLAJEPAConfig(**kw)
    qcfg = g17._cosmos_reason2_qwen3_vl_config() if size == "full" else qwen3vl_tiny_config()
    tok = _AddTokensTokenizer(151669 if size == "full" else 294)
    saved = qi.Qwen3VLForConditionalGeneration, qi.AutoProcessor
    qi.Qwen3VLForConditionalGeneration = types.SimpleNamespace(
        from_pretrained=lambda *_a, torch_dtype=torch.float32, **_k: Qwen3VLForConditionalGeneration(qcfg).to(torch_dtype))
    qi.AutoProcessor = types.SimpleNamespace(from_pretrained=lambda *_a, **_k: types.SimpleNamespace(tokenizer=tok))
    try:
        model = VLAJEPAModel(cfg)
    finally:
        qi.Qwen3VLForConditionalGeneration, qi.AutoProcessor = saved
    qwen = model.qwen.model.model
    vc = qwen.config.vision_config
    grid = [1, res // vc.patch_size, res // vc.patch_size]
    g = torch.Generator().manual_seed(SEED + 1)
    hi = 150000 if size == "full" else 280
    words = lambda n: torch.randint(10, hi, (n,), generator=g).tolist()
    # "<|im_start|>user\n" [images] "Your task is {instruction}. Infer ... frames {action tokens} and
    # produce ... {embodied tokens}." "<|im_end|>\n<|im_start|>assistant\n"
    im_start, im_end, nl = (151644, 151645, 198) if size == "full" else (5, 6, 7)
    action_ids = [i for t in model.action_tokens[:cfg.num_video_frames // cfg.jepa_tubelet_size - 1]
                  for i in [tok.convert_tokens_to_ids(t)] * cfg.num_action_tokens_per_timestep]
    embodied = [model.embodied_action_token_id] * cfg.num_embodied_action_tokens_per_instruction
    tail = [words(3) + words(n_text) + words(8), action_ids, words(6), embodied, words(1), [im_end, nl, im_start] + words(1) + [nl]]
    input_ids, attention_mask, pos = qwen3vl_layout(qwen, views, grid, [[im_start] + words(1) + [nl]] + tail)
    first = (input_ids[0] == model.embodied_action_token_id).nonzero()[0].item()
    n_patches = views * grid[1] * grid[2]
    inputs = dict(
        pixel_values=torch.rand(n_patches, 3 * vc.temporal_patch_size * vc.patch_size ** 2, generator=g) * 2 - 1,
        input_ids=input_ids,
        attention_mask=attention_mask,
        position_ids=pos,
        state=torch.randn(1, 1, cfg.state_dim, generator=g),
        noise=torch.randn(1, cfg.chunk_size, cfg.action_dim, generator=g),
    )
    return VlaJepaChunk(model, grid, views, (first, len(embodied))), inputs


# ----------------------------------------------------------------------------------------------
# multi_task_dit: LeRobot's Multi-Task DiT: CLIP ViT-B/16 (CLS token per camera and observation
# step) and CLIP's text encoder (pooled, projected) with the state into one conditioning vector
# for a 6-layer, 512-wide DiT (AdaLN-Zero, RoPE) that denoises a 32 x action_dim chunk with DDPM
# over 100 steps (num_inference_steps None = num_train_timesteps), 2 observation steps. Sizes are
# LeRobot's defaults; CLIP ViT-B/16 as openai/clip-vit-base-patch16's config.json as known (vision
# 768 x 12, 12 heads, ffn 3072, patch 16 at 224; text 512 x 12, 8 heads, ffn 2048, vocab 49408,
# 77 positions). 2 cameras, an 8-D state and 7-D actions are choices here. DDPM's step draws fresh
# noise at every t > 0: all of it is the `step_noise` input.

def clip_configs(size):
    from transformers import CLIPTextConfig, CLIPVisionConfig
    if size == "full":
        return (CLIPVisionConfig(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12,
                                 patch_size=16, image_size=224, projection_dim=512),
                CLIPTextConfig(hidden_size=512, intermediate_size=2048, num_hidden_layers=12, num_attention_heads=8,
                               vocab_size=49408, max_position_embeddings=77, eos_token_id=49407, projection_dim=512))
    return (CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, patch_size=8,
                             image_size=32, projection_dim=32),
            CLIPTextConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2, vocab_size=300,
                           max_position_embeddings=16, eos_token_id=299, projection_dim=32))


class MultiTaskDiTChunk(nn.Module):
    """(images (B, n_obs, cams, 3, H, W), state (B, n_obs, state_dim), input_ids, attention_mask,
    noise (B, horizon, action_dim), step_noise (B, steps - 1, horizon, action_dim)) -> the
    (B, n_action_steps, action_dim) actions. MultiTaskDiTPolicy._generate_actions with
    DiffusionObjective.conditional_sample spelled out over the scheduler's timesteps as Python ints
    (set_timesteps runs at build time, and each step's previous timestep, which DDPMScheduler finds
    with .nonzero() on its timesteps, is looked up from a table made then), the first
    torch.randn the `noise` input and DDPM's per-step variance noise (diffusers' randn_tensor) the
    `step_noise` slices."""

    def __init__(self, policy):
        super().__init__()
        self.policy = policy
        obj = policy.objective
        obj.noise_scheduler.set_timesteps(obj.num_inference_steps)
        self.timesteps = [int(t) for t in obj.noise_scheduler.timesteps]
        self.prev = {t: int(obj.noise_scheduler.previous_timestep(t)) for t in self.timesteps}

    def forward(self, images, state, input_ids, attention_mask, noise, step_noise):
        import diffusers.schedulers.scheduling_ddpm as ddpm
        from lerobot.utils.constants import OBS_IMAGES, OBS_LANGUAGE_ATTENTION_MASK, OBS_LANGUAGE_TOKENS, OBS_STATE
        p = self.policy
        cond = p.observation_encoder.encode({OBS_STATE: state, OBS_IMAGES: images, OBS_LANGUAGE_TOKENS: input_ids,
                                             OBS_LANGUAGE_ATTENTION_MASK: attention_mask})
        sched, sample = p.objective.noise_scheduler, noise
        draws = iter(step_noise.unbind(1))
        saved = ddpm.randn_tensor
        ddpm.randn_tensor = lambda *_a, **_k: next(draws)
        sched.previous_timestep = self.prev.__getitem__  # DDPM finds it with .nonzero() on its timesteps
        try:
            for t in self.timesteps:
                out = p.noise_predictor(sample, torch.full(sample.shape[:1], t, dtype=torch.long, device=sample.device),
                                       conditioning_vec=cond)
                sample = sched.step(out, t, sample).prev_sample
        finally:
            ddpm.randn_tensor = saved
            del sched.previous_timestep
        start = p.config.n_obs_steps - 1
        return sample[:, start:start + p.config.n_action_steps]


def build_multi_task_dit(size, dtype="fp32"):
    import lerobot.policies.multi_task_dit.modeling_multi_task_dit as mtd
    from lerobot.configs import FeatureType, PolicyFeature
    from lerobot.policies.multi_task_dit.configuration_multi_task_dit import MultiTaskDiTConfig
    from transformers import CLIPTextModel, CLIPVisionModel
    vcfg, tcfg = clip_configs(size)
    res, cams, sdim, adim = vcfg.image_size, 2, 8, 7
    kw = dict(device="cpu", image_crop_shape=(res, res))
    if size == "tiny":
        kw.update(horizon=8, n_action_steps=6, hidden_dim=32, num_layers=2, num_heads=2, timestep_embed_dim=16,
                  num_inference_steps=3, tokenizer_max_length=16)
        sdim, adim = 4, 3
    cfg = MultiTaskDiTConfig(**kw)
    cfg.input_features = {"observation.state": PolicyFeature(type=FeatureType.STATE, shape=(sdim,))}
    for i in range(cams):
        cfg.input_features[f"observation.images.cam{i}"] = PolicyFeature(type=FeatureType.VISUAL, shape=(3, res, res))
    cfg.output_features = {"action": PolicyFeature(type=FeatureType.ACTION, shape=(adim,))}
    saved = mtd.CLIPVisionModel, mtd.CLIPTextModel
    mtd.CLIPVisionModel = types.SimpleNamespace(from_pretrained=lambda *_a, **_k: CLIPVisionModel(vcfg))
    mtd.CLIPTextModel = types.SimpleNamespace(from_pretrained=lambda *_a, **_k: CLIPTextModel(tcfg))
    try:
        policy = mtd.MultiTaskDiTPolicy(cfg)
    finally:
        mtd.CLIPVisionModel, mtd.CLIPTextModel = saved
    chunk = MultiTaskDiTChunk(policy)
    g = torch.Generator().manual_seed(SEED + 1)
    n_tok, n_words = cfg.tokenizer_max_length, (12 if size == "full" else 5)
    ids = [tcfg.bos_token_id if size == "full" else 1]  # <|startoftext|> words <|endoftext|>, padded with it
    ids += torch.randint(300 if size == "full" else 3, 49000 if size == "full" else 290, (n_words,), generator=g).tolist()
    ids += [tcfg.eos_token_id] * (n_tok - len(ids))
    mask = torch.zeros(1, n_tok, dtype=torch.long)
    mask[:, :n_words + 2] = 1
    n_obs = cfg.n_obs_steps
    inputs = dict(
        images=torch.randn(1, n_obs, cams, 3, res, res, generator=g),
        state=torch.rand(1, n_obs, sdim, generator=g) * 2 - 1,
        input_ids=torch.tensor([ids]),
        attention_mask=mask,
        noise=torch.randn(1, cfg.horizon, adim, generator=g),
        step_noise=torch.randn(1, len(chunk.timesteps) - 1, cfg.horizon, adim, generator=g),
    )
    return chunk, inputs


# ----------------------------------------------------------------------------------------------
# eo1: EO-1 on Qwen2.5-VL-3B-Instruct (a 32-block windowed ViT with full attention at blocks
# 7/15/23/31, 36-layer 2048-wide Qwen2.5 text model, M-RoPE): the prompt's state token carries the
# projected state, the prefix [system, 2 views, state, task] is encoded once into a KV cache, and
# 10 Euler steps re-run the text model over the chunk's 8 action-token positions. Qwen2.5-VL-3B's
# config.json as known (not checked against the file): text 2048 x 36, 16 heads / 2 KV heads, ffn
# 11008, vocab 151936, rope theta 1e6, mrope [16, 24, 24]; vision 1280 x 32, 16 heads, ffn 3420,
# patch 14, window 112, out 2048. EO-1's special tokens are taken as added right after Qwen2.5's
# 151665 ids (<|action_start|> 151665 ... <|vla|> 151671; as known, not checked). 2 views at 224
# px (64 tokens each, inside EO1's 64-128 x 28^2 pixel range) and a 12-token task are choices here.

def qwen25vl_config(size):
    from transformers.models.qwen2_5_vl.configuration_qwen2_5_vl import Qwen2_5_VLConfig
    if size == "full":
        text = dict(hidden_size=2048, intermediate_size=11008, num_attention_heads=16, num_hidden_layers=36,
                    num_key_value_heads=2, rms_norm_eps=1e-6, rope_theta=1000000.0, max_position_embeddings=128000,
                    vocab_size=151936, tie_word_embeddings=True,
                    rope_scaling=dict(type="mrope", rope_type="default", mrope_section=[16, 24, 24]))
        vision = dict(depth=32, hidden_act="silu", hidden_size=1280, intermediate_size=3420, num_heads=16, in_chans=3,
                      out_hidden_size=2048, patch_size=14, spatial_merge_size=2, window_size=112,
                      fullatt_block_indexes=[7, 15, 23, 31], tokens_per_second=2, temporal_patch_size=2)
        ids = dict(image_token_id=151655, video_token_id=151656, vision_start_token_id=151652, vision_end_token_id=151653)
    else:
        text = dict(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_hidden_layers=2,
                    num_key_value_heads=2, rms_norm_eps=1e-6, rope_theta=1000000.0, max_position_embeddings=1024,
                    vocab_size=300, tie_word_embeddings=True,
                    rope_scaling=dict(type="mrope", rope_type="default", mrope_section=[2, 3, 3]))
        vision = dict(depth=2, hidden_act="silu", hidden_size=32, intermediate_size=64, num_heads=2, in_chans=3,
                      out_hidden_size=64, patch_size=8, spatial_merge_size=2, window_size=32, fullatt_block_indexes=[1],
                      tokens_per_second=2, temporal_patch_size=2)
        ids = dict(image_token_id=290, video_token_id=291, vision_start_token_id=292, vision_end_token_id=293)
    return Qwen2_5_VLConfig(text_config=text, vision_config=vision, tie_word_embeddings=True, **ids)


def conv3d_zero_bias(module):
    """Give each bias-free Conv3d an explicit zero bias (a buffer, so seeded_init leaves it at 0).
    onnxscript 0.7.2's aten_conv3d writes a missing bias as Expand(0, [C_out, 2]), a 2-D B that
    vkinfer ("B must be 1-D of the 32 output channels") and onnxruntime 1.32 ("bias must be a 1D
    tensor of size output_channels") both refuse; conv2d's lowering does not have this."""
    for m in module.modules():
        if isinstance(m, nn.Conv3d) and m.bias is None:
            m._parameters.pop("bias")
            m.register_buffer("bias", torch.zeros(m.out_channels, dtype=m.weight.dtype), persistent=False)


class EO1Chunk(nn.Module):
    """(pixel_values (patches, 3*2*P*P), input_ids, attention_mask, position_ids (3, B, L), state,
    noise) -> the (B, chunk, max_action_dim) chunk: EO1VisionFlowMatchingModel.sample_actions with
    the Qwen2.5-VL vision tower spelled out. Its window order (get_window_index: boolean indexing,
    .tolist(), unique_consecutive), cu_seqlens and the inverse order are computed at build time from
    the fixed image grid (window_index, reverse as buffers, the cu_seqlens as numpy arrays whose
    .tolist() is static); the M-RoPE position_ids (get_rope_index, .tolist() over input_ids) and the
    action span's start (.item()) too; the noise is an input instead of sample_noise."""

    def __init__(self, model, grid, views, act_start, state_id, action_id):
        super().__init__()
        self.model = model
        vis = model.vlm_backbone.model.visual
        gt = torch.tensor([grid] * views)
        with torch.no_grad():
            window_index, cu_window = vis.get_window_index(gt)
        self.register_buffer("window_index", window_index, persistent=False)
        self.register_buffer("reverse", torch.argsort(window_index), persistent=False)
        self.cu_window = torch.unique_consecutive(torch.tensor(cu_window)).numpy()
        self.cu_full = np.arange(views + 1) * (grid[0] * grid[1] * grid[2])
        self.grid = gt.numpy()
        self.act_start, self.ids = act_start, dict(state_token_id=state_id, action_token_id=action_id)

    def vision(self, pixel_values):
        vis = self.model.vlm_backbone.model.visual
        h = vis.patch_embed(pixel_values.type(vis.dtype))
        rot = vis.rot_pos_emb(self.grid)
        n, unit = h.shape[0], vis.spatial_merge_unit
        h = h.reshape(n // unit, unit, -1)[self.window_index].reshape(n, -1)
        rot = rot.reshape(n // unit, unit, -1)[self.window_index].reshape(n, -1)
        emb = torch.cat((rot, rot), dim=-1)
        pe = (emb.cos(), emb.sin())
        for i, blk in enumerate(vis.blocks):
            h = blk(h, cu_seqlens=self.cu_full if i in vis.fullatt_block_indexes else self.cu_window, position_embeddings=pe)
        return vis.merger(h)[self.reverse]

    def forward(self, pixel_values, input_ids, attention_mask, position_ids, state, noise):
        from lerobot.policies.common.flow_matching import euler_integrate
        m = self.model
        qwen = m.vlm_backbone.model
        chunk = m.config.chunk_size
        emb = m.embed_prefix(input_ids, states=state, **self.ids).clone()
        image_mask = (input_ids == qwen.config.image_token_id).unsqueeze(-1).expand_as(emb)
        emb = emb.masked_scatter(image_mask, self.vision(pixel_values).to(emb.dtype))
        a0, a1 = self.act_start, self.act_start + chunk
        out = qwen(attention_mask=attention_mask[:, :a0], position_ids=position_ids[..., :a0], inputs_embeds=emb[:, :a0],
                   use_cache=True, return_dict=True)
        cache = out.past_key_values

        def denoise_fn(x_t, timestep):  # as in sample_actions
            emb[:, a0:a1] = m.embed_suffix(timestep, x_t).to(emb.dtype)
            cache.crop(a0)
            o = qwen(attention_mask=attention_mask[:, :a1], past_key_values=cache, inputs_embeds=emb[:, a0:a1],
                     position_ids=position_ids[..., a0:a1], use_cache=True, return_dict=True)
            with m.flow_head_autocast_context():
                v_t = m.action_out_proj(o.last_hidden_state[:, :chunk].to(dtype=m.action_out_proj.dtype))
            return v_t.reshape(x_t.shape).to(x_t.dtype)

        return euler_integrate(denoise_fn, noise.to(m.action_in_proj.weight.dtype), m.config.num_denoise_steps)


def build_eo1(size, dtype="fp32"):
    from lerobot.policies.eo1.configuration_eo1 import EO1Config
    from lerobot.policies.eo1.modeling_eo1 import EO1VisionFlowMatchingModel
    from transformers import Qwen2_5_VLForConditionalGeneration
    qcfg = qwen25vl_config(size)
    kw = dict(device="cpu", vlm_config=qcfg.to_dict(), dtype="bfloat16" if dtype == "bf16" else "float32")
    views, res, n_task = 2, 224, 12
    if size == "tiny":
        kw.update(chunk_size=4, n_action_steps=4, max_state_dim=8, max_action_dim=6, num_denoise_steps=3)
        views, res, n_task = 2, 64, 4
    cfg = EO1Config(**kw)
    vlm = Qwen2_5_VLForConditionalGeneration._from_config(cfg.vlm_backbone_config,
                                                          dtype=torch.bfloat16 if dtype == "bf16" else torch.float32)
    model = EO1VisionFlowMatchingModel(cfg, vlm)
    conv3d_zero_bias(model)
    vc = qcfg.vision_config
    grid = [1, res // vc.patch_size, res // vc.patch_size]
    n_img = grid[1] * grid[2] // vc.spatial_merge_size ** 2
    if size == "full":
        a_start, a_pad, a_end, s_start, s_pad, s_end, vla = range(151665, 151672)
        im_start, im_end, nl, hi = 151644, 151645, 198, 151000
    else:
        a_start, a_pad, a_end, s_start, s_pad, s_end, vla = 294, 295, 296, 297, 298, 299, 289
        im_start, im_end, nl, hi = 5, 6, 7, 280
    g = torch.Generator().manual_seed(SEED + 1)
    words = lambda n: torch.randint(10, hi, (n,), generator=g).tolist()
    ids = [im_start] + words(1) + [nl] + words(6) + [im_end, nl, im_start] + words(1) + [nl]  # system, user
    for _ in range(views):
        ids += [qcfg.vision_start_token_id] + [qcfg.image_token_id] * n_img + [qcfg.vision_end_token_id]
    ids += [s_start, s_pad, s_end] + words(n_task) + [vla, im_end, nl, im_start] + words(1) + [nl]
    act_start = len(ids) + 1
    ids += [a_start] + [a_pad] * cfg.chunk_size + [a_end, im_end, nl]
    input_ids = torch.tensor([ids])
    attention_mask = torch.ones_like(input_ids)
    mm = (input_ids == qcfg.image_token_id).int()
    pos, _ = model.vlm_backbone.model.get_rope_index(input_ids, image_grid_thw=torch.tensor([grid] * views),
                                                     attention_mask=attention_mask, mm_token_type_ids=mm)
    n_patches = views * grid[1] * grid[2]
    inputs = dict(
        pixel_values=torch.rand(n_patches, 3 * vc.temporal_patch_size * vc.patch_size ** 2, generator=g) * 2 - 1,
        input_ids=input_ids,
        attention_mask=attention_mask,
        position_ids=pos,
        state=torch.randn(1, cfg.max_state_dim, generator=g),
        noise=torch.randn(1, cfg.chunk_size, cfg.max_action_dim, generator=g),
    )
    return EO1Chunk(model, grid, views, act_start, s_pad, a_pad), inputs


# ----------------------------------------------------------------------------------------------
# wall_x: WALL-OSS-flow (x-square-robot/wall-oss-flow) on Qwen2.5-VL-3B's shapes with the MLP of
# each text layer made a hard-routed 2-expert MoE (expert 0 for every token but <|action|>, expert 1
# for the action tokens, which also attend to each other bidirectionally); no KV cache: each of the
# 10 Euler steps (torchdiffeq's fixed-grid euler over linspace(0, 1, 11)) re-runs the whole prompt.
# The checkpoint's config.json comes from the hub: `full` here is eo1's Qwen2.5-VL-3B config with
# both experts at the dense FFN's size (2048 -> 11008; the published expert widths are not known
# here, so the parameter count is a little above the card's 4.22 B), 20-dim state and action.
# torchdiffeq, peft and qwen_vl_utils (absent here) are stubbed: inference only needs odeint's
# euler, written out in the wrapper; peft and smart_resize are for LoRA and preprocessing.

def import_wall_x():
    import lerobot.utils.import_utils as iu
    import lerobot.configs  # noqa: F401 (imports diffusers, whose find_spec("peft") a stub without a spec breaks)
    for name, attrs in (("torchdiffeq", ("odeint",)), ("peft", ("LoraConfig", "get_peft_model")),
                        ("qwen_vl_utils", ()), ("qwen_vl_utils.vision_process", ("smart_resize",))):
        try:
            __import__(name)
        except ImportError:
            mod = types.ModuleType(name)
            for a in attrs:
                setattr(mod, a, None)
            sys.modules[name] = mod
    iu._wallx_deps_available = True
    import lerobot.policies.wall_x.modeling_wall_x as mw
    return mw


def static_moe(text_model, token_types):
    """SparseMoeBlock.forward with each expert's token positions fixed at build time (its
    `mask.sum() == 0`, boolean indexing and torch.where are data-dependent): the same per-token
    expert MLPs over index_select'ed tokens, scattered back with index_copy."""
    idx = [torch.nonzero(token_types[0] == e).flatten() for e in range(2)]

    def forward(self, hidden_states, experts_indices):
        out = torch.zeros_like(hidden_states)
        for e, expert in enumerate(self.experts):
            if idx[e].numel() == 0:
                continue
            d = self.dim_inputs[e]
            sel = hidden_states[:, idx[e], :d]
            y = expert(sel)
            if d < hidden_states.shape[-1]:
                y = torch.nn.functional.pad(y, (0, hidden_states.shape[-1] - d))
            out = out.index_copy(1, idx[e], y)
        return out
    for layer in text_model.layers:
        if layer.mlp is None:
            layer.moe.forward = types.MethodType(forward, layer.moe)


class WallXChunk(nn.Module):
    """(pixel_values, input_ids, attention_mask, position_ids (3, B, L), proprioception (B, 1, S),
    agent_pos_mask, dof_mask (B, chunk, A), noise) -> the (B, chunk, A) chunk: Qwen2_5_VLMoEForAction
    .predict(predict_mode="diffusion") with the vision tower spelled out as eo1's (window order and
    cu_seqlens from the fixed grid), the M-RoPE position_ids (get_rope_index) and the <|propri|> /
    <|action|> positions fixed at build time, and the noise an input instead of torch.randn."""

    def __init__(self, model, grid, views, token_types, propri_pos, action_pos):
        super().__init__()
        self.model = model
        vis = model.visual
        gt = torch.tensor([grid] * views)
        with torch.no_grad():
            window_index, cu_window = vis.get_window_index(gt)
        self.register_buffer("window_index", window_index, persistent=False)
        self.register_buffer("reverse", torch.argsort(window_index), persistent=False)
        self.register_buffer("token_types", token_types, persistent=False)
        self.register_buffer("propri_pos", propri_pos, persistent=False)
        self.register_buffer("action_pos", action_pos, persistent=False)
        self.cu_window = torch.unique_consecutive(torch.tensor(cu_window)).numpy()
        self.cu_full = np.arange(views + 1) * (grid[0] * grid[1] * grid[2])
        self.grid = gt.numpy()
        static_moe(model.model, token_types)

    def vision(self, pixel_values):  # EO1Chunk.vision on Qwen2_5_VLMoEForAction.visual
        return EO1Chunk.vision(types.SimpleNamespace(model=types.SimpleNamespace(vlm_backbone=types.SimpleNamespace(
            model=types.SimpleNamespace(visual=self.model.visual))), window_index=self.window_index, reverse=self.reverse,
            grid=self.grid, cu_full=self.cu_full, cu_window=self.cu_window), pixel_values)

    def forward(self, pixel_values, input_ids, attention_mask, position_ids, proprioception, agent_pos_mask, dof_mask,
                noise):
        m = self.model
        emb = m.model.embed_tokens(input_ids)
        image_mask = (input_ids == m.config.image_token_id).unsqueeze(-1).expand_as(emb)
        emb = emb.masked_scatter(image_mask, self.vision(pixel_values).to(emb.dtype))
        prop = m.action_preprocessor.proprioception_proj(proprioception.to(emb.dtype), agent_pos_mask.to(emb.dtype))
        prop = prop.to(torch.bfloat16)  # as predict() does, whatever the model's dtype
        emb = emb.index_copy(1, self.propri_pos, prop.reshape(emb.shape[0], -1, emb.shape[-1]).to(emb.dtype))
        b, chunk, adim = noise.shape
        dof_mask = dof_mask.to(torch.float32)

        def step(t, x):
            a = m.action_preprocessor.step(timestep=t.reshape(1).repeat(b), noisy_action=x, dof_mask=dof_mask)
            e = emb.index_copy(1, self.action_pos, a.reshape(b, chunk, -1).to(emb.dtype))
            h = m.model(input_ids=None, attention_mask=attention_mask, position_ids=position_ids, inputs_embeds=e,
                        moe_token_types=self.token_types, use_cache=False, return_dict=True).last_hidden_state
            v = m.action_preprocessor.action_proj_back(h[:, self.action_pos].to(torch.float32))
            return v.reshape(b, chunk, adim)

        times = torch.linspace(0, 1, m.num_inference_timesteps + 1, dtype=torch.float32)
        x = noise.to(torch.float32)
        for i in range(len(times) - 1):  # torchdiffeq odeint(method="euler") on this grid
            x = x + (times[i + 1] - times[i]) * step(times[i], x)
        return x


def build_wall_x(size, dtype="fp32"):
    mw = import_wall_x()
    from lerobot.policies.wall_x.qwen_model.configuration_qwen2_5_vl import Qwen2_5_VLConfig as WallXQwenConfig
    base = qwen25vl_config(size)
    text = base.text_config.to_dict()
    hidden, ffn = text["hidden_size"], text["intermediate_size"]
    if size == "full":
        chunk, adim, sdim, views, res, n_task, steps = 32, 20, 20, 2, 224, 12, 10
        act_id, propri_id, im_start, im_end, nl, hi = 151665, 151666, 151644, 151645, 198, 151000
    else:
        chunk, adim, sdim, views, res, n_task, steps = 4, 6, 8, 2, 64, 4, 3
        act_id, propri_id, im_start, im_end, nl, hi = 294, 295, 5, 6, 7, 280
    text.update(num_experts=2, experts=[dict(hidden_size=hidden, intermediate_size=ffn, hidden_act="silu")] * 2,
                dim_inputs=(hidden, hidden), mlp_moe=True, attention_moe=False, dof_config={"action": adim})
    for k in ("model_type", "transformers_version", "architectures", "dtype", "torch_dtype"):
        text.pop(k, None)
    vision = base.vision_config.to_dict()
    ids = dict(image_token_id=base.image_token_id, video_token_id=base.video_token_id,
               vision_start_token_id=base.vision_start_token_id, vision_end_token_id=base.vision_end_token_id)
    qcfg = WallXQwenConfig(text_config=text, vision_config=vision, tie_word_embeddings=True, **ids)
    qcfg.agent_pos_config = {"state": sdim}
    qcfg._attn_implementation = "eager"
    tok = types.SimpleNamespace(convert_tokens_to_ids={"<|action|>": act_id, "<|propri|>": propri_id}.get)
    tdtype = torch.bfloat16 if dtype == "bf16" else torch.float32
    model = mw.Qwen2_5_VLMoEForAction(qcfg, processor=types.SimpleNamespace(tokenizer=tok), vision_attn_implementation="sdpa")
    model.num_inference_timesteps = steps
    if dtype == "bf16":
        model.to_bfloat16_for_selected_params()  # as WallXPolicy loads it
    conv3d_zero_bias(model)
    with torch.device("cpu"):  # the inputs and fixed orders, also where the model is built on the meta device
        vc = qcfg.vision_config
        grid = [1, res // vc.patch_size, res // vc.patch_size]
        n_img = grid[1] * grid[2] // vc.spatial_merge_size ** 2
        g = torch.Generator().manual_seed(SEED + 1)
        words = lambda n: torch.randint(10, hi, (n,), generator=g).tolist()
        ids = [im_start] + words(1) + [nl] + words(6) + [im_end, nl, im_start] + words(1) + [nl]  # system, user
        for _ in range(views):
            ids += [qcfg.vision_start_token_id] + [qcfg.image_token_id] * n_img + [qcfg.vision_end_token_id]
        ids += words(n_task) + [propri_id, im_end, nl, im_start] + words(1) + [nl] + [act_id] * chunk + [im_end]
        input_ids = torch.tensor([ids])
        attention_mask = torch.ones_like(input_ids)
        with torch.no_grad():
            pos, _ = model.get_rope_index(input_ids, torch.tensor([grid] * views), None, None, attention_mask)
        token_types = (input_ids == act_id).long()
        propri_pos = torch.nonzero(input_ids[0] == propri_id).flatten()
        action_pos = torch.nonzero(input_ids[0] == act_id).flatten()
        n_patches = views * grid[1] * grid[2]
        inputs = dict(
            pixel_values=(torch.rand(n_patches, 3 * vc.temporal_patch_size * vc.patch_size ** 2, generator=g) * 2 - 1).to(tdtype),
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=pos,
            proprioception=torch.randn(1, 1, sdim, generator=g),
            agent_pos_mask=torch.ones(1, 1, sdim),
            dof_mask=torch.ones(1, chunk, adim),
            noise=torch.randn(1, chunk, adim, generator=g),
        )
        return WallXChunk(model, grid, views, token_types, propri_pos, action_pos), inputs


# ----------------------------------------------------------------------------------------------
# fastwam: FastWAM (lerobot/fastwam_base) on Wan2.2-TI2V-5B: the first frame is encoded by the
# Wan2.2 VAE (16x spatial, 48 latent channels) and run once through the 30-layer 3072-wide video
# DiT into a per-layer KV cache; 10 steps of the 1024-wide action DiT (mixed attention over that
# cache, shift-5 flow-matching schedule) denoise the 32 x 7 chunk. The prompt goes through UMT5-XXL
# (fixed token ids instead of google/umt5-xxl's tokenizer, all 128 unpadded). The VAE and UMT5 come
# from the hub (Wan-AI/Wan2.2-TI2V-5B-Diffusers): they are built here from diffusers' /
# transformers' classes with the published sizes as known (not checked against the files): VAE
# base_dim 160, decoder_base_dim 256, z_dim 48, dim_mult [1, 2, 4, 4], 2 res blocks, residual
# down/up blocks, patch 2; UMT5-XXL d_model 4096, 24 layers, 64 heads of 64, d_ff 10240, gated-gelu,
# vocab 256384. The VAE's 48 latents_mean/std (its config.json) are not known here: 0 and 1 stand in.

def build_fastwam(size, dtype="fp32"):
    from diffusers import AutoencoderKLWan
    from transformers import UMT5Config, UMT5EncoderModel
    from lerobot.policies.fastwam.configuration_fastwam import FastWAMConfig
    from lerobot.policies.fastwam.wan import ActionDiT, FastWAM, MoT, WanVideoDiT
    from lerobot.policies.fastwam.wan.adapters import WanVideoVAE38
    from lerobot.policies.fastwam.wan.components import WanTextEncoder
    tdtype = torch.bfloat16 if dtype == "bf16" else torch.float32
    dev = "meta" if torch.get_default_device().type == "meta" else "cpu"  # build_fastwam("full") under torch.device("meta")
    if size == "full":
        cfg = FastWAMConfig(base_model_id=None, device="cpu", torch_dtype="bfloat16" if dtype == "bf16" else "float32")
        vae = dict(base_dim=160, decoder_base_dim=256, num_res_blocks=2)
        t5 = dict(d_model=4096, num_layers=24, num_heads=64, d_kv=64, d_ff=10240, vocab_size=256384)
        n_text = cfg.tokenizer_max_len
    else:
        video = dict(patch_size=[1, 2, 2], in_dim=48, hidden_dim=64, ffn_dim=128, freq_dim=32, text_dim=32, out_dim=48,
                     num_heads=2, attn_head_dim=32, num_layers=2, eps=1e-6, seperated_timestep=True,
                     video_attention_mask_mode="first_frame_causal", action_conditioned=False, action_dim=6,
                     action_group_causal_mask_mode="group_diagonal")
        action = dict(action_dim=6, hidden_dim=32, ffn_dim=64, num_heads=2, attn_head_dim=32, num_layers=2, text_dim=32,
                      freq_dim=32, eps=1e-6)
        cfg = FastWAMConfig(base_model_id=None, device="cpu", action_dim=6, proprio_dim=5, action_horizon=8,
                            n_action_steps=8, image_size=(32, 64), num_inference_steps=3, video_dit_config=video,
                            action_dit_config=action, torch_dtype="float32")
        vae = dict(base_dim=16, decoder_base_dim=16, num_res_blocks=1)
        t5 = dict(d_model=32, num_layers=2, num_heads=2, d_kv=16, d_ff=64, vocab_size=300)
        n_text = 6
    vae = AutoencoderKLWan(z_dim=48, dim_mult=[1, 2, 4, 4], attn_scales=[], temperal_downsample=[False, True, True],
                           is_residual=True, in_channels=12, out_channels=12, patch_size=2, scale_factor_spatial=16,
                           scale_factor_temporal=4, latents_mean=[0.0] * 48, latents_std=[1.0] * 48, **vae)
    t5 = UMT5EncoderModel(UMT5Config(feed_forward_proj="gated-gelu", relative_attention_num_buckets=32,
                                     relative_attention_max_distance=128, dropout_rate=0.0, **t5))
    video_expert = WanVideoDiT(**cfg.video_dit_config).to(tdtype)
    action_expert = ActionDiT(**cfg.action_dit_config).to(tdtype)
    mot = MoT(mixtures={"video": video_expert, "action": action_expert}, mot_checkpoint_mixed_attn=False)
    with torch.device("cpu"):  # its schedulers' constants (.item()), also where the experts are on the meta device
        model = FastWAM(video_expert=video_expert, action_expert=action_expert, mot=mot,
                        vae=WanVideoVAE38(dtype=tdtype, device=dev, pretrained=vae),
                        text_encoder=WanTextEncoder(dtype=tdtype, device=dev, pretrained=t5), tokenizer=None,
                        text_dim=int(cfg.video_dit_config["text_dim"]), proprio_dim=cfg.proprio_dim, device=dev,
                        torch_dtype=tdtype, video_infer_shift=float(cfg.video_scheduler["infer_shift"]),
                        action_infer_shift=float(cfg.action_scheduler["infer_shift"]))
    with torch.device("cpu"):
        g = torch.Generator().manual_seed(SEED + 1)
        h, w = cfg.image_size
        inputs = dict(
            image=torch.rand(1, 3, h, w, generator=g),
            input_ids=torch.randint(1, t5.config.vocab_size - 1, (1, n_text), generator=g),
            attention_mask=torch.ones(1, n_text, dtype=torch.bool),
            proprio=torch.randn(1, cfg.proprio_dim, generator=g),
            noise=torch.randn(1, cfg.action_horizon, cfg.action_dim, generator=g),
        )
    real_rope(model, (1, h // 32, w // 32))  # the first frame's latent grid after the [1, 2, 2] patch
    return FastWAMChunk(model, cfg.action_horizon, cfg.num_inference_steps), inputs


def real_rope(model, grid):
    """Wan's RoPE in real arithmetic: rope_apply and apply_dense_rope multiply complex128 tensors
    (view_as_complex, torch.polar tables) and rope_apply loops over grid_sizes.tolist(), a tensor
    built inside pre_dit (data-dependent to torch.export). Here the tables are kept as
    view_as_real pairs, the rotation is (a c - b s, a s + b c) in float64 as complex128 does it, and
    the video grid is the fixed first-frame grid. Replaces the two functions in video_dit's module
    (the process's FastWAM all use these from then on)."""
    import lerobot.policies.fastwam.wan.video_dit as vd

    def rot(x, cs):
        a, b, c, s = x[..., 0], x[..., 1], cs[..., 0], cs[..., 1]
        return torch.stack([a * c - b * s, a * s + b * c], dim=-1)

    def rope_apply(x, grid_sizes, freqs):
        n, c = x.size(2), x.size(3) // 2
        fr = freqs.split([c - 2 * (c // 3), c // 3, c // 3], dim=1)
        f, h, w = grid
        seq_len = f * h * w
        out = []
        for i in range(x.shape[0]):
            x_i = x[i, :seq_len].to(torch.float64).reshape(seq_len, n, -1, 2)
            freqs_i = torch.cat([fr[0][:f].view(f, 1, 1, -1, 2).expand(f, h, w, -1, 2),
                                 fr[1][:h].view(1, h, 1, -1, 2).expand(f, h, w, -1, 2),
                                 fr[2][:w].view(1, 1, w, -1, 2).expand(f, h, w, -1, 2)], dim=-2).reshape(seq_len, 1, -1, 2)
            x_i = rot(x_i, freqs_i).flatten(2)
            out.append(torch.cat([x_i, x[i, seq_len:].to(torch.float64)]))
        return torch.stack(out).float()

    def apply_dense_rope(x, freqs, num_heads):
        b, s_, d = x.shape
        xr = x.reshape(b, s_, num_heads, -1, 2).to(torch.float32).to(torch.float64)
        return rot(xr, freqs.reshape(freqs.shape[0], 1, -1, 2)).flatten(2).to(x.dtype)

    vd.rope_apply, vd.apply_dense_rope = rope_apply, apply_dense_rope
    for expert in (model.video_expert, model.action_expert):
        if expert.freqs.is_complex():
            expert.freqs = torch.view_as_real(expert.freqs)


class FastWAMChunk(nn.Module):
    """(image (1, 3, H, W) in [0, 1], input_ids, attention_mask (UMT5's), proprio, noise) -> the
    (1, horizon, action_dim) chunk: FastWAM.infer_action, the prompt through encode_prompt's
    text-encoder call (padding zeroed by multiplying with the mask) instead of the tokenizer, and
    the noise an input instead of _make_action_latents. The VAE and the text encoder, which FastWAM
    holds unregistered (they are not in its checkpoint), are registered here so that they are
    initialised, moved and exported with the rest."""

    def __init__(self, model, horizon, steps):
        super().__init__()
        self.model, self.vae, self.text_encoder = model, model.vae, model.text_encoder
        self.horizon, self.steps = horizon, steps

    def forward(self, image, input_ids, attention_mask, proprio, noise):
        m = self.model
        emb = m.text_encoder(input_ids, attention_mask) * attention_mask.unsqueeze(-1).to(m.torch_dtype)
        saved = m._make_action_latents
        m._make_action_latents = lambda *_a, **_k: noise.to(m.torch_dtype)
        try:
            out = m.infer_action(prompt=None, input_image=image, action_horizon=self.horizon, proprio=proprio,
                                 context=emb, context_mask=torch.ones_like(attention_mask),
                                 num_inference_steps=self.steps)
        finally:
            m._make_action_latents = saved
        return out["action"].unsqueeze(0)


# ----------------------------------------------------------------------------------------------
# molmoact2: MolmoAct2 (allenai/MolmoAct2): a SigLIP ViT (27 x 1152 at 378 px, patch 14) whose
# layers -3 and -9 are pooled 2x2 by attention and projected into the text model, the prompt
# encoded once into a KV cache, and a 32-layer 1024-wide action expert that cross-attends to every
# layer's K/V for 10 Euler steps. The checkpoint's config.json comes from the hub: `full` is the
# HF config classes' defaults (shipped in lerobot's molmoact2_hf_model; not checked against the
# file; their 48 text layers are cut to the action expert's 32, which must be equal). One 378 px
# crop, 2x2 pooling of its 27x27 patches (the last row and column dropped: 169 tokens) and the
# prompt are laid out here instead of by its processor.

def build_molmoact2(size, dtype="fp32"):
    from lerobot.policies.molmoact2.molmoact2_hf_model.configuration_molmoact2 import (
        MolmoAct2ActionExpertConfig, MolmoAct2AdapterConfig, MolmoAct2Config, MolmoAct2TextConfig, MolmoAct2VitConfig)
    from lerobot.policies.molmoact2.molmoact2_hf_model.modeling_molmoact2 import MolmoAct2Model
    tdtype = torch.bfloat16 if dtype == "bf16" else torch.float32
    if size == "full":
        vit, adapter, expert = MolmoAct2VitConfig(), MolmoAct2AdapterConfig(), MolmoAct2ActionExpertConfig()
        text = MolmoAct2TextConfig(num_hidden_layers=expert.num_layers)  # defaults 48 vs 32: must be equal
        horizon, adim, steps, crops, n_task = 30, 32, 10, 1, 16
    else:
        vit = MolmoAct2VitConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=3, num_attention_heads=2,
                                 num_key_value_heads=2, head_dim=16, image_default_input_size=(56, 56), image_num_pos=16)
        adapter = MolmoAct2AdapterConfig(vit_layers=(-1, -2), hidden_size=32, num_attention_heads=2, num_key_value_heads=2,
                                         head_dim=16, intermediate_size=64, text_hidden_size=64)
        text = MolmoAct2TextConfig(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16, vocab_size=300,
                                   additional_vocab_size=32, num_hidden_layers=2, intermediate_size=128)
        expert = MolmoAct2ActionExpertConfig(max_action_horizon=8, max_action_dim=6, hidden_size=32, num_layers=2, num_heads=2,
                                             timestep_embed_dim=32)
        horizon, adim, steps, crops, n_task = 8, 6, 3, 1, 4
    patch_id, start_id, end_id = range(text.vocab_size, text.vocab_size + 3)  # in its additional vocabulary
    cfg = MolmoAct2Config(vit_config=vit, adapter_config=adapter, text_config=text, action_expert_config=expert,
                          image_patch_id=patch_id, image_start_token_id=start_id, low_res_image_start_token_id=start_id,
                          image_end_token_id=end_id, max_action_dim=adim, max_action_horizon=horizon,
                          flow_matching_num_steps=steps, use_cache=True)
    for c in (cfg, cfg.text_config, cfg.vit_config, cfg.adapter_config):
        c._attn_implementation = "eager"
    model = MolmoAct2Model(cfg).to(tdtype)
    with torch.device("cpu"):
        side = vit.image_default_input_size[0] // vit.image_patch_size  # patches per side
        n_patch = side * side
        ij = [(i, j) for i in range(0, side - 1, 2) for j in range(0, side - 1, 2)]
        pooled = torch.tensor([[[c * n_patch + (i + di) * side + j + dj for di in (0, 1) for dj in (0, 1)]
                                for c in range(crops) for (i, j) in ij]])
        n_img = pooled.shape[1]
        g = torch.Generator().manual_seed(SEED + 1)
        words = lambda n: torch.randint(10, 280 if size == "tiny" else 150000, (n,), generator=g).tolist()
        ids = words(3) + [start_id] + [patch_id] * n_img + [end_id] + words(n_task)
        input_ids = torch.tensor([ids])
        inputs = dict(
            images=(torch.rand(1, crops, n_patch, 3 * vit.image_patch_size ** 2, generator=g) * 2 - 1).to(tdtype),
            input_ids=input_ids,
            attention_mask=torch.ones_like(input_ids),
            token_type_ids=(input_ids >= patch_id).long(),  # words are drawn below vocab_size  # the processor's mm token types: the image's tokens
            noise=torch.randn(1, horizon, adim, generator=g),
        )
        image_pos = torch.nonzero(input_ids[0] == patch_id).flatten()
    return MolmoAct2Chunk(model, pooled, image_pos, horizon, steps), inputs


class MolmoAct2Chunk(nn.Module):
    """(images (1, crops, patches, 3*14*14) in [-1, 1], input_ids, attention_mask, token_type_ids
    (1 on the image's tokens, which attend to each other both ways), noise) -> the
    (1, horizon, max_action_dim) chunk: MolmoAct2Model.generate_actions_from_inputs (continuous
    mode) with the image-patch positions and the pooling indices fixed at build time (its
    build_batched_images and the boolean indexing of valid tokens / patch tokens are
    data-dependent), and the noise an input instead of torch.randn."""

    def __init__(self, model, pooled, image_pos, horizon, steps):
        super().__init__()
        self.model, self.horizon, self.steps = model, horizon, steps
        self.register_buffer("pooled", pooled, persistent=False)
        self.register_buffer("image_pos", image_pos, persistent=False)

    def vision(self, images):  # MolmoAct2VisionBackbone.forward with every pooled index valid
        vb = self.model.vision_backbone
        images = torch.round(((images.to(torch.float32) + 1.0) * 0.5) * 255.0)
        images = (torch.clamp(images, 0.0, 255.0) / 255.0 * 2.0 - 1.0).to(vb.dtype)
        feats = vb.encode_image(images)
        b, dim = feats.shape[0], feats.shape[-1]
        to_pool = feats.reshape(b, -1, dim)[:, self.pooled[0]].reshape(-1, self.pooled.shape[-1], dim)
        pooled = vb.image_pooling_2d(to_pool.mean(-2, keepdim=True), to_pool, attn_mask=None)
        return vb.image_projector(pooled.reshape(b, -1, pooled.shape[-1]))

    def forward(self, images, input_ids, attention_mask, token_type_ids, noise):
        m = self.model
        x = m.transformer.wte(input_ids)
        x = x.index_add(1, self.image_pos, self.vision(images).to(x.dtype))
        out = m(inputs_embeds=x, attention_mask=attention_mask, token_type_ids=token_type_ids, use_cache=True)
        kv = m._extract_kv_states(out.past_key_values)
        enc_mask = m._get_encoder_attention_mask(input_ids, attention_mask)
        gate, dmask = m._depth_gate_from_condition(input_ids=input_ids, encoder_attention_mask=enc_mask, layer_kv_states=kv)
        kv = m._apply_depth_gate_to_layer_kv_states(kv, dmask, gate)
        ae = m.action_expert
        traj = noise.to(ae.action_embed.weight.dtype)
        ctx = ae.prepare_context(encoder_kv_states=kv, encoder_attention_mask=enc_mask, state_embeddings=None,
                                 batch_size=1, seq_len=traj.shape[1], device=traj.device, dtype=traj.dtype)
        ts = [torch.full((1,), i / self.steps, dtype=torch.float32) for i in range(self.steps)]
        mods = ae.get_or_prepare_modulation_cache(ts, cache_key=None)
        from lerobot.policies.molmoact2.molmoact2_hf_model.modeling_molmoact2 import _ActionFlowInputs
        return m._run_action_flow_loop(_ActionFlowInputs(trajectory=traj, context=ctx, modulations=mods,
                                                         action_dim_is_pad=None), self.steps)


# ----------------------------------------------------------------------------------------------
# lingbot_va: LingBot-VA (robbyant/lingbot-va-base) on the Wan2.2 stack: both cameras (128 px,
# side by side) are encoded by the Wan2.2 VAE (streaming encoder) into the first latent frame, the
# prompt by UMT5-XXL (fixed token ids, the negative prompt "" as [eos] + padding), then one
# autoregressive chunk: 20 video-latent steps with classifier-free guidance 5 (batch 2) and 50
# action steps of the 30-layer 3072-wide dual-stream transformer over its KV cache. The
# transformer's sizes are LingBotVAConfig's defaults (its transformer/config.json, per lerobot);
# the VAE and UMT5 come from the hub and are built as in build_fastwam (sizes as known there,
# latents mean/std 0/1). Each chunk's first frame of actions is LeRobot's to drop (as here: the
# chunk is _infer's raw (1, action_dim, frames, action_per_frame, 1) actions).

def lingbot_static(policy):
    """LingBot-VA made exportable without changing its arithmetic: the transformer's KV cache keeps
    its slot bookkeeping (mask, ids, is_pred) in numpy, so that each call's slots (allocate_slots'
    nonzero/argsort, the valid pool) are constants of the fixed call sequence, k/v written with
    index_copy; RoPE in real (cos, sin) pairs instead of torch.polar / complex128 (float64 as
    there); FlowMatchScheduler.step on the i-th sigma of its call count instead of argmin over the
    schedule; `~_action_mask` as a list of channels. Patches WanAttention / WanRotaryPosEmbed for the
    process, the schedulers and the policy's class for this policy."""
    from lerobot.policies.lingbot_va import utils as U
    from lerobot.policies.lingbot_va.modeling_lingbot_va import LingBotVAPolicy
    A = U.WanAttention

    def init_kv_cache(self, cache_name, total_token_len, num_head, head_dim, device, dtype, batch_size):
        if self.attn_caches is None:
            return
        self.attn_caches[cache_name] = {
            "k": torch.zeros([batch_size, total_token_len, num_head, head_dim], device=device, dtype=dtype),
            "v": torch.zeros([batch_size, total_token_len, num_head, head_dim], device=device, dtype=dtype),
            "id": np.full((total_token_len,), -1, dtype=np.int64),
            "mask": np.zeros((total_token_len,), dtype=bool),
            "is_pred": np.zeros((total_token_len,), dtype=bool)}

    def allocate_slots(self, cache_name, key_size):
        c = self.attn_caches[cache_name]
        mask, ids = c["mask"], c["id"]
        free = np.nonzero(~mask)[0]
        if free.size < key_size:
            used = np.nonzero(mask)[0]
            order = np.argsort(ids[used], kind="stable")
            to_free = used[order[:key_size - free.size]]
            mask[to_free] = False
            ids[to_free] = -1
            free = np.nonzero(~mask)[0]
        if free.size < key_size:
            raise RuntimeError("KV cache exhausted")
        return free[:key_size]

    def update_cache(self, cache_name, key, value, is_pred):
        c = self.attn_caches[cache_name]
        slots = self.allocate_slots(cache_name, key.shape[1])
        new_id = c["id"][c["mask"]].max() + 1 if c["mask"].any() else 0
        idx = torch.from_numpy(slots.copy())
        c["k"] = c["k"].index_copy(1, idx, key.to(c["k"].dtype))
        c["v"] = c["v"].index_copy(1, idx, value.to(c["v"].dtype))
        c["mask"][slots] = True
        c["id"][slots] = new_id
        c["is_pred"][slots] = is_pred
        return slots

    def clear_pred_cache(self, cache_name):
        if self.attn_caches is None:
            return
        c = self.attn_caches[cache_name]
        c["mask"][c["is_pred"]] = False

    def rot(x, freqs):  # complex128 x * complex64 freqs, in real arithmetic (float64)
        xr = x.to(torch.float64).reshape(*x.shape[:3], -1, 2)
        f = freqs.to(torch.float64)
        a, b, c, s = xr[..., 0], xr[..., 1], f[..., 0], f[..., 1]
        return torch.stack([a * c - b * s, a * s + b * c], dim=-1).flatten(3).to(x.dtype)

    def forward(self, q, k, v, rotary_emb, update_cache=0, cache_name="pos"):
        kv_cache = self.attn_caches[cache_name] if (self.attn_caches is not None) and (cache_name in self.attn_caches) else None
        query, key, value = self.to_q(q), self.to_k(k), self.to_v(v)
        query = self.norm_q(query).unflatten(2, (self.heads, -1))
        key = self.norm_k(key).unflatten(2, (self.heads, -1))
        value = value.unflatten(2, (self.heads, -1))
        if rotary_emb is not None:
            query, key = rot(query, rotary_emb), rot(key, rotary_emb)
        slots = None
        if kv_cache is not None and kv_cache["k"] is not None:
            slots = self.update_cache(cache_name, key, value, is_pred=(update_cache == 1))
            valid = torch.from_numpy(np.nonzero(kv_cache["mask"])[0])
            key, value = kv_cache["k"][:, valid], kv_cache["v"][:, valid]
        hidden_states = self.attn_op(query, key, value)
        if update_cache == 0 and kv_cache is not None and kv_cache["k"] is not None:
            kv_cache["mask"][slots] = False
        hidden_states = hidden_states.flatten(2, 3).type_as(query)
        return self.to_out[1](self.to_out[0](hidden_states))

    def rope_forward(self, grid_ids):  # WanRotaryPosEmbed: (cos, sin) pairs instead of torch.polar
        with torch.no_grad():
            f = grid_ids[:, 0, :].unsqueeze(-1) * self.f_freqs_base.to(grid_ids.device)
            h = grid_ids[:, 1, :].unsqueeze(-1) * self.h_freqs_base.to(grid_ids.device)
            w = grid_ids[:, 2, :].unsqueeze(-1) * self.w_freqs_base.to(grid_ids.device)
            freqs = torch.cat([f, h, w], dim=-1).float()
            return torch.stack([freqs.cos(), freqs.sin()], dim=-1)

    A.init_kv_cache, A.allocate_slots, A.update_cache, A.clear_pred_cache, A.forward = (
        init_kv_cache, allocate_slots, update_cache, clear_pred_cache, forward)
    U.WanRotaryPosEmbed.forward = rope_forward

    def step(self, model_output, timestep, sample, to_final=False, **kwargs):  # the i-th call is timesteps[i]
        i = self._step_i
        self._step_i += 1
        sig = self._sig_np
        last = to_final or i + 1 >= len(sig)
        sigma_ = np.float32(1 if (self.inverse_timesteps or self.reverse_sigmas) else 0) if last else sig[i + 1]
        return sample + model_output * float(np.float32(sigma_ - sig[i]))

    for sch, n in ((policy._scheduler, policy.config.num_inference_steps),
                   (policy._action_scheduler, policy.config.action_num_inference_steps)):
        sch.set_timesteps(n)
        sch._sig_np = sch.sigmas.numpy().astype(np.float32)
        sch.step = step.__get__(sch)
    used = set(policy.config.used_action_channel_ids)
    unused = [i for i in range(policy.config.action_dim) if i not in used]
    policy.__class__ = type("StaticLingBotVA", (type(policy),), {"_action_mask": property(lambda s: UnusedChannels(unused))})


class UnusedChannels:
    """`~policy._action_mask` as the list of unused channels (a boolean mask index is data-dependent)."""

    def __init__(self, unused):
        self.unused = unused
    def __invert__(self):
        return self.unused


def build_lingbot_va(size, dtype="fp32"):
    from diffusers import AutoencoderKLWan
    from transformers import UMT5Config, UMT5EncoderModel
    from lerobot.configs.types import FeatureType, PolicyFeature
    from lerobot.policies.lingbot_va.configuration_lingbot_va import LingBotVAConfig
    from lerobot.policies.lingbot_va.modeling_lingbot_va import LingBotVAPolicy
    from lerobot.policies.lingbot_va.utils import WanVAEStreamingWrapper
    name = "bfloat16" if dtype == "bf16" else "float32"
    if size == "full":
        cfg = LingBotVAConfig(dtype=name, device="cpu")
        vae = dict(base_dim=160, decoder_base_dim=256, num_res_blocks=2)
        t5 = dict(d_model=4096, num_layers=24, num_heads=64, d_kv=64, d_ff=10240, vocab_size=256384)
        n_text = cfg.max_sequence_length
    else:
        cfg = LingBotVAConfig(num_attention_heads=2, attention_head_dim=24, text_dim=32, freq_dim=32, ffn_dim=64, num_layers=2,
                              action_dim=8, used_action_channel_ids=list(range(6)), height=32, width=32, frame_chunk_size=2,
                              action_per_frame=2, num_inference_steps=3, action_num_inference_steps=3, max_sequence_length=6,
                              dtype=name, device="cpu")
        vae = dict(base_dim=16, decoder_base_dim=16, num_res_blocks=1)
        t5 = dict(d_model=32, num_layers=2, num_heads=2, d_kv=16, d_ff=64, vocab_size=300)
        n_text = cfg.max_sequence_length
    cfg.input_features = {k: PolicyFeature(FeatureType.VISUAL, (3, cfg.height, cfg.width)) for k in cfg.obs_cam_keys}
    policy = LingBotVAPolicy(cfg)
    tdtype = policy.dtype
    vae = AutoencoderKLWan(z_dim=48, dim_mult=[1, 2, 4, 4], attn_scales=[], temperal_downsample=[False, True, True],
                           is_residual=True, in_channels=12, out_channels=12, patch_size=2, scale_factor_spatial=16,
                           scale_factor_temporal=4, latents_mean=[0.0] * 48, latents_std=[1.0] * 48, **vae).to(tdtype)
    t5 = UMT5EncoderModel(UMT5Config(feed_forward_proj="gated-gelu", relative_attention_num_buckets=32,
                                     relative_attention_max_distance=128, dropout_rate=0.0, **t5)).to(tdtype)
    policy._frozen = {"vae": vae, "streaming_vae": WanVAEStreamingWrapper(vae), "text_encoder": t5, "tokenizer": None}
    with torch.device("cpu"):
        lingbot_static(policy)
        h, w = policy._latent_hw
        g = torch.Generator().manual_seed(SEED + 1)
        neg = torch.zeros(1, n_text, dtype=torch.long)
        neg[0, 0] = 1  # "" -> </s>, then padding
        inputs = dict(
            image=torch.rand(1, 3, cfg.height, cfg.width, generator=g),
            image2=torch.rand(1, 3, cfg.height, cfg.width, generator=g),
            input_ids=torch.randint(2, t5.config.vocab_size - 1, (1, n_text), generator=g),
            attention_mask=torch.ones(1, n_text, dtype=torch.long),
            negative_ids=neg,
            negative_mask=(neg != 0).long(),
            latent_noise=torch.randn(1, 48, cfg.frame_chunk_size, h, w, generator=g),
            action_noise=torch.randn(1, cfg.action_dim, cfg.frame_chunk_size, cfg.action_per_frame, 1, generator=g),
        )
    return LingBotVAChunk(policy, vae, t5), inputs


class LingBotVAChunk(nn.Module):
    """(image, image2 (1, 3, H, W) in [0, 1], input_ids, attention_mask, negative_ids, negative_mask,
    latent_noise, action_noise) -> the first chunk's (1, action_dim, frames, action_per_frame, 1)
    actions: LingBotVAPolicy.predict_action_chunk's first call (_encode_frames, _init_streaming_cache,
    _infer) with _get_t5_prompt_embeds' encoder call on fixed ids (padding zeroed by multiplying
    with the mask, as its slicing does for trailing padding), the two torch.randn of _infer inputs,
    and lingbot_static's patches. The VAE and UMT5 (unregistered in the policy) are registered here."""

    def __init__(self, policy, vae, text_encoder):
        super().__init__()
        self.policy, self.vae, self.text_encoder = policy, vae, text_encoder

    def forward(self, image, image2, input_ids, attention_mask, negative_ids, negative_mask, latent_noise, action_noise):
        p = self.policy
        embed = lambda ids, mask: (self.text_encoder(ids, mask).last_hidden_state * mask.unsqueeze(-1).to(p.dtype)).to(p.dtype)
        p._prompt_embeds, p._negative_prompt_embeds = embed(input_ids, attention_mask), embed(negative_ids, negative_mask)
        p._frozen["streaming_vae"].clear_cache()
        keys = p.config.obs_cam_keys
        init_latent = p._encode_frames([{keys[0]: image, keys[1]: image2}])
        p._init_streaming_cache(init_latent)
        for sch in (p._scheduler, p._action_scheduler):
            sch._step_i = 0
        noises = [latent_noise.to(p.dtype), action_noise.to(p.dtype)]
        randn = torch.randn
        torch.randn = lambda *_a, **_k: noises.pop(0).clone()  # _infer's two draws, in order
        try:
            actions, _ = p._infer(init_latent, frame_st_id=0)
        finally:
            torch.randn = randn
        return actions

BUILDERS = {"smolvla": (build_smolvla, smolvla_bf16), "pi0": (build_pi0, None)}
BUILDERS.update(pi05=(build_pi05, None), pi0_fast=(build_pi0_fast, None), xvla=(build_xvla, None), groot=(build_groot, None), evo1=(build_evo1, None), vla_jepa=(build_vla_jepa, None),
                multi_task_dit=(build_multi_task_dit, None), eo1=(build_eo1, None), wall_x=(build_wall_x, None),
                fastwam=(build_fastwam, None), molmoact2=(build_molmoact2, None),
                lingbot_va=(build_lingbot_va, None))


# ----------------------------------------------------------------------------------------------

def seeded_init(module):
    """Random weights with the spread trained ones have: each Linear/Conv/Embedding weight drawn
    N(0, 1/fan_in) (unit-variance activations through deep stacks), norms' scales near 1."""
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if p.ndim >= 2:
                fan_in = p[0].numel()
                p.copy_(torch.randn(p.shape, generator=g) / fan_in ** 0.5)
            elif name.endswith("bias"):
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)
            else:
                p.copy_(1.0 + torch.randn(p.shape, generator=g) * 0.05)


def build(policy, size, dtype):
    torch.manual_seed(SEED)
    make, to_bf16 = BUILDERS[policy]
    module, inputs = make(size) if to_bf16 else make(size, dtype)
    dtypes = {n: p.dtype for n, p in module.named_parameters()}
    module.float()
    seeded_init(module)
    for n, p in module.named_parameters():  # the policy's own mixed precision, restored
        p.data = p.data.to(dtypes[n])
    module = module.eval()
    if dtype == "bf16" and to_bf16:
        to_bf16(module)
    return module, inputs


def export(policy, size, dtype, out):
    os.makedirs(out, exist_ok=True)
    stem = os.path.join(out, f"{policy}_{size}_{dtype}")
    module, inputs = build(policy, size, dtype)
    n_params = sum(p.numel() for p in module.parameters())
    t0 = time.time()
    with torch.no_grad():
        expected = module(**inputs)
    t_eager = time.time() - t0
    t0 = time.time()
    with torch.no_grad():
        prog = torch.onnx.export(module, (), kwargs=inputs, input_names=list(inputs), output_names=["actions"],
                                 dynamo=True, external_data=True, optimize=OPTIMIZE)
        prog.save(stem + ".onnx", external_data=True)
    t_export = time.time() - t0
    as_np = lambda t: t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy()
    extra = {}
    if dtype == "bf16":  # the same (bf16-rounded) weights in fp32: how far bf16 arithmetic moves eager itself
        with torch.no_grad():
            extra["expected_fp32"] = as_np(module.float()(**inputs))
    np.savez(stem + ".npz", **{k: as_np(v) for k, v in inputs.items()}, expected=as_np(expected), **extra)
    print(f"{policy} {size} {dtype}: {n_params / 1e6:.1f} M params, eager {t_eager:.2f} s, export {t_export:.1f} s, "
          f"-> {stem}.onnx", flush=True)
    return stem


def run_vkinfer(vkinfer, stem, extra=()):
    """vkinfer on the exported inputs: (actions, stdout)."""
    import subprocess
    import tempfile
    data = np.load(stem + ".npz")
    with tempfile.TemporaryDirectory() as tmp:
        args = [vkinfer, "run", stem + ".onnx", "--output-dir", tmp, *extra]
        for k in data.files:
            if k.startswith("expected"):
                continue
            np.save(os.path.join(tmp, k + ".npy"), data[k])
            args += ["--input", f"{k}={os.path.join(tmp, k + '.npy')}"]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"vkinfer failed ({r.returncode}): {r.stderr.strip() or r.stdout.strip()}")
        return np.load(os.path.join(tmp, "actions.npy")), data["expected"], data.get("expected_fp32")


def errors(got, want):
    got, want = got.astype(np.float64), want.astype(np.float64)
    d = np.abs(got - want)
    return float(d.max()), float(d.max() / max(np.abs(want).max(), 1e-30))


def median_ms(fn, runs, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def torch_peers(module, inputs, runs, warmup):
    """PyTorch CUDA eager (TF32 off) and a CUDA graph replay: (its output, eager ms, graph ms or
    the reason capture failed). Inputs are copied host -> device and the chunk back, as vkinfer's are."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    module = module.cuda()
    host = {k: v.pin_memory() for k, v in inputs.items()}
    dev = {k: v.cuda() for k, v in host.items()}

    def eager():
        with torch.no_grad():
            return module(**{k: v.cuda(non_blocking=True) for k, v in host.items()}).cpu()
    out = eager()
    ms_eager = median_ms(eager, runs, warmup)
    try:
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s), torch.no_grad():
            for _ in range(2):
                module(**dev)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph), torch.no_grad():
            static_out = module(**dev)

        def replay():
            for k, v in host.items():
                dev[k].copy_(v, non_blocking=True)
            graph.replay()
            return static_out.cpu()
        ms_graph = median_ms(replay, runs, warmup)
    except Exception as e:  # noqa: BLE001 (the reason is a cell of the table)
        ms_graph = f"capture failed: {type(e).__name__}: {str(e).strip().splitlines()[0][:160] if str(e).strip() else ''}"
    ms_compile = None
    if os.environ.get("VLA_COMPILE", "0") != "0":  # torch.compile (default mode): minutes of compiling per policy
        try:
            torch._dynamo.reset()
            compiled = torch.compile(module)

            def run_compiled():
                with torch.no_grad():
                    return compiled(**{k: v.cuda(non_blocking=True) for k, v in host.items()}).cpu()
            t0 = time.perf_counter()
            run_compiled()
            compile_s = time.perf_counter() - t0
            ms_compile = dict(ms=median_ms(run_compiled, runs, warmup), compile_s=round(compile_s, 1))
        except Exception as e:  # noqa: BLE001
            ms_compile = f"failed: {type(e).__name__}: {str(e).strip().splitlines()[0][:160] if str(e).strip() else ''}"
    module.cpu()
    torch.cuda.empty_cache()
    return out.float().numpy(), ms_eager, ms_graph, ms_compile


def input_args(stem, tmp):
    """`--input NAME=FILE` for each exported input, saved into tmp: the bench runs on the inputs
    the policy was exported with (random ones would give data-dependent counts of zero: groot's
    token masks)."""
    data = np.load(stem + ".npz")
    args = []
    for k in data.files:
        if not k.startswith("expected"):
            np.save(os.path.join(tmp, k + ".npy"), data[k])
            args += ["--input", f"{k}={os.path.join(tmp, k + '.npy')}"]
    return args


def vkinfer_bench(vkinfer, stem, runs, warmup, profile=False):
    """One `vkinfer bench` on the exported inputs, so that the model is planned once: the first
    (untimed) run's chunk (--output-dir), the timings (--json) and, with `profile`, GPU time per
    op and kernel (--profile: runs after the timed ones). Returns (chunk, bench JSON, its line)."""
    import json
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out")  # apart from the inputs, whatever the outputs are named
        args = [vkinfer, "bench", stem + ".onnx", *input_args(stem, tmp), "--runs", str(runs), "--warmup", str(warmup),
                "--json", "--output-dir", out] + (["--profile"] if profile else [])
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"vkinfer failed ({r.returncode}): {r.stderr.strip() or r.stdout.strip()}")
        try:
            line = r.stdout.strip().splitlines()[-1]
            return np.load(os.path.join(out, "actions.npy")), json.loads(line), line
        except (IndexError, ValueError, OSError) as e:
            raise RuntimeError(f"vkinfer bench gave no chunk or JSON ({type(e).__name__}: {e}): {r.stdout[-200:]}") from e


def profile_summary(b, top=12):
    """The largest op types and kernels of bench's --profile JSON, as text."""
    total = b.get("gpu_total_ms", 0.0)
    lines = [f"{b['model']}: median {b['median_ms']:.3f} ms, GPU {total:.3f} ms in {b['dispatches']} dispatches, "
             f"outside kernels {b.get('outside_ms', float('nan')):.3f} ms"]
    for title, key in (("by op", "gpu_ms_by_op"), ("by kernel", "gpu_ms_by_kernel")):
        lines.append(title + ":")
        for name, ms in sorted(b.get(key, {}).items(), key=lambda kv: -kv[1])[:top]:
            lines.append(f"  {name:<28} {ms:9.3f} ms {100 * ms / total if total else 0:5.1f}%")
    return "\n".join(lines) + "\n"


def table_row(vkinfer, policy, size, dtype, out, runs, warmup):
    stem = os.path.join(out, f"{policy}_{size}_{dtype}")
    row = dict(policy=policy, size=size, dtype=dtype)
    t0 = time.time()
    module, inputs = build(policy, size, dtype)
    row["params_M"] = round(sum(p.numel() for p in module.parameters()) / 1e6, 1)
    if not os.path.exists(stem + ".onnx"):
        try:
            export(policy, size, dtype, out)
        except Exception as e:  # noqa: BLE001
            row["exported"] = f"no: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
            return row
    row["exported"] = "yes"
    row["export_s"] = round(time.time() - t0, 1)
    profile = os.environ.get("VLA_PROFILE_DIR")  # the bench JSON with GPU time per op and kernel, kept there
    try:
        got, b, line = vkinfer_bench(vkinfer, stem, runs, warmup, profile=bool(profile))
    except RuntimeError as e:
        row["vkinfer"] = str(e)[:400]
        return row
    if profile:
        base = os.path.join(profile, f"profile_{policy}_{dtype}")
        with open(base + ".json", "w") as f:
            f.write(line + "\n")
        with open(base + ".txt", "w") as f:
            f.write(profile_summary(b))
    data = np.load(stem + ".npz")
    want_cpu, ideal = data["expected"], data.get("expected_fp32")
    if torch.cuda.is_available():
        want, row["eager_ms"], row["graph_ms"], row["compile_ms"] = torch_peers(module, inputs, runs, warmup)
    else:
        want = want_cpu
    row["max_abs_err"], row["rel_err"] = errors(got, want)
    if ideal is not None:
        row["rel_err_vkinfer_vs_fp32"] = errors(got, ideal)[1]
        row["rel_err_eager_vs_fp32"] = errors(want, ideal)[1]
    row.update(vkinfer_ms=b["median_ms"], plan_ms=b["plan_ms"], dispatches=b["dispatches"],
               gpu_mib=round((b["weight_bytes"] + b["intermediate_bytes"]) / 2**20), device=b["device"])
    return row


def check_from_torch(policy, size, dtype, precision="fp32"):
    """vkinfer.from_torch on the policy (its inputs positional, in the order of its forward's
    parameters), the chunk compared with eager's on the same inputs: (max abs, rel to max)."""
    import inspect
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import vkinfer
    module, inputs = build(policy, size, dtype)
    names = [n for n in inspect.signature(module.forward).parameters if n in inputs]
    if sorted(names) != sorted(inputs):
        raise SystemExit(f"{policy}: forward's parameters {names} are not its inputs {list(inputs)}")
    args = tuple(inputs[n] for n in names)
    with torch.no_grad():
        want = module(*args)
    t0 = time.time()
    with vkinfer.from_torch(module, args, input_names=names, output_names=["actions"], dynamo=True, external_data=True,
                            optimize=OPTIMIZE, precision=precision) as ts:
        t_ready = time.time() - t0
        got = ts(*args)
    if got.dtype != want.dtype or got.shape != want.shape:
        raise SystemExit(f"{policy}: from_torch gave {got.dtype} {tuple(got.shape)}, eager {want.dtype} {tuple(want.shape)}")
    ab, rel = errors(got.float().numpy(), want.float().numpy())
    print(f"{policy} {size} {dtype} through vkinfer.from_torch: {got.dtype} {tuple(got.shape)}, export and session "
          f"{t_ready:.1f} s; max abs err {ab:.3g}, rel to max {rel:.3g} against eager")
    return ab, rel


def fixture(stem, dest, rtol):
    """An exported tiny policy as a tests/models/torch2/ case (inputs, eager's chunk, meta.json)."""
    import json
    import shutil
    import onnx
    os.makedirs(dest, exist_ok=True)
    data = np.load(stem + ".npz")
    names = [k for k in data.files if not k.startswith("expected")]
    for i, k in enumerate(names):
        np.save(os.path.join(dest, f"in_{i}.npy"), data[k])
    np.save(os.path.join(dest, "out_0.npy"), data["expected"])
    m = onnx.load(stem + ".onnx", load_external_data=True)
    for node in m.graph.node:  # the exporter's per-node stack traces and scopes: most of a tiny graph's bytes
        del node.metadata_props[:]
    onnx.save(m, os.path.join(dest, "model.onnx"), save_as_external_data=True, location="model.onnx.data")
    meta = dict(exporter="dynamo", torch=torch.__version__, opset=[o.version for o in m.opset_import if o.domain in ("", "ai.onnx")],
                inputs={k: f"in_{i}.npy" for i, k in enumerate(names)}, outputs={"actions": "out_0.npy"}, rtol=rtol)
    with open(os.path.join(dest, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("--policy", default="smolvla", choices=sorted(BUILDERS))
    e.add_argument("--size", default="tiny", choices=["tiny", "full"])
    e.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"])
    e.add_argument("--out", required=True)
    r = sub.add_parser("check")
    r.add_argument("vkinfer")
    r.add_argument("--policy", default="smolvla", choices=sorted(BUILDERS))
    r.add_argument("--size", default="tiny", choices=["tiny", "full"])
    r.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"])
    r.add_argument("--out", required=True)
    t = sub.add_parser("table")
    t.add_argument("vkinfer")
    t.add_argument("--policies", default="smolvla,pi0")
    t.add_argument("--sizes", default="full")
    t.add_argument("--dtypes", default="bf16,fp32")
    t.add_argument("--out", required=True)
    t.add_argument("--runs", type=int, default=20)
    t.add_argument("--warmup", type=int, default=3)
    t.add_argument("--json", help="append each row to this file as a JSON line")
    ft = sub.add_parser("from_torch", help="the policy through vkinfer.from_torch, against eager")
    ft.add_argument("--policy", default="smolvla", choices=sorted(BUILDERS))
    ft.add_argument("--size", default="tiny", choices=["tiny", "full"])
    ft.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"])
    ft.add_argument("--rtol", type=float, help="exit 1 where the error relative to eager's max passes this")
    fx = sub.add_parser("fixture", help="write an exported policy as a tests/models/torch2/ case")
    fx.add_argument("stem")
    fx.add_argument("dest")
    fx.add_argument("--rtol", type=float, default=1e-4)
    a = ap.parse_args()
    if a.cmd == "fixture":
        fixture(a.stem, a.dest, a.rtol)
    if a.cmd == "table":
        import json
        for policy in a.policies.split(","):
            for size in a.sizes.split(","):
                for dtype in a.dtypes.split(","):
                    row = table_row(a.vkinfer, policy, size, dtype, a.out, a.runs, a.warmup)
                    print(json.dumps(row), flush=True)
                    if a.json:
                        with open(a.json, "a") as f:
                            f.write(json.dumps(row) + "\n")
    if a.cmd == "check":
        stem = os.path.join(a.out, f"{a.policy}_{a.size}_{a.dtype}")
        if not os.path.exists(stem + ".onnx"):
            export(a.policy, a.size, a.dtype, a.out)
        got, want, ideal = run_vkinfer(a.vkinfer, stem)
        ab, rel = errors(got, want)
        print(f"{a.policy} {a.size} {a.dtype}: max abs err {ab:.3g}, rel to max {rel:.3g}")
        if ideal is not None:
            print(f"  against the same weights in fp32: vkinfer {errors(got, ideal)[1]:.3g}, "
                  f"eager {a.dtype} {errors(want, ideal)[1]:.3g}")
    if a.cmd == "export":
        export(a.policy, a.size, a.dtype, a.out)
    if a.cmd == "from_torch":
        _, rel = check_from_torch(a.policy, a.size, a.dtype)
        if a.rtol is not None and not rel <= a.rtol:
            print(f"FAIL: {rel:.3g} > {a.rtol:g}")
            return 1


if __name__ == "__main__":
    sys.exit(main())
