#!/usr/bin/env python3
"""Parity fixtures for samstream's SAM 2.1 CPU reference (io.samstream.gpu.sam2), made by Meta's `sam2`.

Runs Meta's SAM2VideoPredictor the way a stream runs: frames in order, never revisited, the stream's
length unknown, over a generated 12-frame clip:
  frame 0: object 1 prompted with a box (the red square), frames 0..4 propagated;
  frame 5: object 2 added with one foreground point (the green disc), frames 5..11 propagated.
The red square passes behind a gray wall (frames ~5..10): the occluded stretch.

Weights and frames are not random numbers from torch: both come from integer formulas that the Java
test repeats (io.samstream.gpu.sam2.DeterministicWeights / SyntheticClip in the tests), so a large
configuration needs no checkpoint in the repository. The tiny configuration also writes its checkpoint
(`torch.save({"model": state_dict})`, fp16, every value exact) so the Java test reads a real file.

Usage (where torch is; Meta's sam2 package on PYTHONPATH, e.g. a checkout's root):
  python make_sam2_fixtures.py --config tiny --out DIR [--device cpu]
  python make_sam2_fixtures.py --config hiera_t --out DIR
Settings as build_sam2_video_predictor(..., apply_postprocessing=True) makes them, except
fill_hole_area = 0 (hole filling needs sam2's CUDA extension; the Java reference leaves it out too).
A stub `hydra` / `iopath` goes on the path when those are missing (sam2 imports them, uses neither here).
"""
import argparse
import importlib.util
import json
import os
import sys
import types

import numpy as np

GOLDEN = 0x9E3779B97F4A7C15
MASK64 = (1 << 64) - 1
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
FRAMES = 12


def install_stubs():
    import torch.nn.functional as F
    if not hasattr(F, "scaled_dot_product_attention"):  # torch < 2.0 (e.g. Debian's python3-torch)
        def sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False):
            return ((q @ k.transpose(-2, -1)) / float(q.shape[-1]) ** 0.5).softmax(dim=-1) @ v
        F.scaled_dot_product_attention = sdpa
    if importlib.util.find_spec("hydra") is None:
        hydra = types.ModuleType("hydra")
        core = types.ModuleType("hydra.core")
        gh = types.ModuleType("hydra.core.global_hydra")
        utils = types.ModuleType("hydra.utils")

        class GlobalHydra:
            @staticmethod
            def instance():
                return GlobalHydra()

            def is_initialized(self):
                return True

        gh.GlobalHydra = GlobalHydra
        hydra.initialize_config_module = lambda *a, **k: None
        hydra.compose = lambda *a, **k: (_ for _ in ()).throw(RuntimeError("hydra stub"))
        utils.instantiate = hydra.compose
        hydra.core, core.global_hydra, hydra.utils = core, gh, utils
        sys.modules.update({"hydra": hydra, "hydra.core": core, "hydra.core.global_hydra": gh,
                            "hydra.utils": utils})
    if importlib.util.find_spec("iopath") is None:
        names = ["iopath", "iopath.common", "iopath.common.file_io"]
        mods = [types.ModuleType(n) for n in names]
        mods[2].g_pathmgr = None
        mods[0].common, mods[1].file_io = mods[1], mods[2]
        sys.modules.update(dict(zip(names, mods)))


# ---- deterministic weights (DeterministicWeights.java repeats this) ----
def fnv1a64(name):
    h = 0xCBF29CE484222325
    for b in name.encode("utf-8"):
        h = ((h ^ b) * 0x100000001B3) & MASK64
    return h


def weight_values(name, shape):
    """Values k/128 * 2^-e (k in [-128, 128)), or 1 + k/1024 for 1-D '.weight' (norms): exact in fp16."""
    n = int(np.prod(shape)) if len(shape) else 1
    z = np.arange(1, n + 1, dtype=np.uint64) * np.uint64(GOLDEN) + np.uint64(fnv1a64(name))
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    k = (z >> np.uint64(56)).astype(np.int64) - 128
    if "gaussian" in name:
        v = k / 128.0
    elif len(shape) >= 2:
        fan_in = n // shape[0]
        e = 0
        while 3 * 4 ** e < fan_in:
            e += 1
        v = k / 128.0 * 2.0 ** (-e)
    elif name.endswith(".weight"):
        v = 1.0 + k / 1024.0
    else:
        v = k / 1024.0
    return v.astype(np.float32).reshape(shape)


# ---- the clip (SyntheticClip.java repeats this) ----
def geometry(t, s):
    a = (s * (25 + 3 * t) // 100, s * 35 // 100, s * 10 // 100)  # red square: cx, cy, half side
    b = (s * (70 - 2 * t) // 100, s * 65 // 100, s * 12 // 100)  # green disc: cx, cy, radius
    wall = (s * 38 // 100, s * 56 // 100, s * 20 // 100, s * 52 // 100)  # x0, x1, y0, y1 (exclusive)
    return a, b, wall


def frame_rgb(t, s):
    y, x = np.mgrid[0:s, 0:s].astype(np.int64)
    cell = max(s // 16, 1)
    checker = ((x // cell + y // cell) % 2) * 24
    r = 40 + (x * 96) // s + checker
    g = 60 + (y * 80) // s + checker // 2
    bl = 110 + ((x + y) * 40) // (2 * s)
    (ax, ay, ah), (bx, by, br), (wx0, wx1, wy0, wy1) = geometry(t, s)
    for sel, col in (((x - bx) ** 2 + (y - by) ** 2 <= br * br, (30, 200, 60)),
                     ((np.abs(x - ax) <= ah) & (np.abs(y - ay) <= ah), (220, 40, 40)),
                     ((x >= wx0) & (x < wx1) & (y >= wy0) & (y < wy1), (128, 128, 128))):
        r, g, bl = np.where(sel, col[0], r), np.where(sel, col[1], g), np.where(sel, col[2], bl)
    return np.stack([r, g, bl], axis=-1).astype(np.uint8)


CONFIGS = {
    # image 128: feature maps 32 / 16 / 8 (stride 4 / 8 / 16); windows 8, 4, 6 (padded at 8; q-pooled with padding);
    # block 2 global; hidden 64, memory 32 (two pointer tokens per object pointer), 2 RoPE heads.
    "tiny": dict(image_size=128, embed_dim=8, heads=1, stages=(1, 2, 2, 1), global_att=(2,),
                 window_spec=(8, 4, 6, 2), bkg=(7, 7), hidden=64, mem_dim=32, mem_layers=2, mem_ffn=128,
                 mem_heads=2, dec_mlp=256, iou_hidden=64,
                 # random heads score every object absent (about -0.08); shift them so masks show
                 overrides={"sam_mask_decoder.pred_obj_score_head.layers.2.bias": 0.5}),
    # the same without the shift: every object judged absent (masks -1024, no-object pointer and memory)
    "tiny_absent": dict(image_size=128, embed_dim=8, heads=1, stages=(1, 2, 2, 1), global_att=(2,),
                        window_spec=(8, 4, 6, 2), bkg=(7, 7), hidden=64, mem_dim=32, mem_layers=2, mem_ffn=128,
                        mem_heads=2, dec_mlp=256, iou_hidden=64),
    # sam2.1_hiera_t.yaml
    "hiera_t": dict(image_size=1024, embed_dim=96, heads=1, stages=(1, 2, 7, 2), global_att=(5, 7, 9),
                    window_spec=(8, 4, 14, 7), bkg=(7, 7), hidden=256, mem_dim=64, mem_layers=4, mem_ffn=2048,
                    mem_heads=1, dec_mlp=2048, iou_hidden=256),
}


def build_model(cfg, base=None):
    """SAM2 at cfg's shapes with Meta's video settings, torch's default initialisation; the class derives from
    `base` (default SAM2VideoPredictor, a SAM2Base), so a trainer can add to it."""
    from sam2.modeling.backbones.hieradet import Hiera
    from sam2.modeling.backbones.image_encoder import FpnNeck, ImageEncoder
    from sam2.modeling.memory_attention import MemoryAttention, MemoryAttentionLayer
    from sam2.modeling.memory_encoder import CXBlock, Fuser, MaskDownSampler, MemoryEncoder
    from sam2.modeling.position_encoding import PositionEmbeddingSine
    from sam2.modeling.sam.mask_decoder import MaskDecoder
    from sam2.modeling.sam.transformer import RoPEAttention, TwoWayTransformer
    from sam2.sam2_video_predictor import SAM2VideoPredictor

    hid, mem, s = cfg["hidden"], cfg["mem_dim"], cfg["image_size"]
    dims = [cfg["embed_dim"] * 2 ** i for i in range(4)]
    trunk = Hiera(embed_dim=cfg["embed_dim"], num_heads=cfg["heads"], stages=cfg["stages"],
                  global_att_blocks=cfg["global_att"], window_spec=cfg["window_spec"],
                  window_pos_embed_bkg_spatial_size=cfg["bkg"])
    neck = FpnNeck(position_encoding=PositionEmbeddingSine(num_pos_feats=hid, normalize=True, temperature=10000),
                   d_model=hid, backbone_channel_list=dims[::-1], fpn_top_down_levels=[2, 3],
                   fpn_interp_model="nearest")
    encoder = ImageEncoder(trunk=trunk, neck=neck, scalp=1)
    feat = [s // 16, s // 16]

    def rope(**kw):
        return RoPEAttention(rope_theta=10000.0, feat_sizes=feat, embedding_dim=hid, num_heads=cfg["mem_heads"],
                             downsample_rate=1, dropout=0.1, **kw)

    layer = MemoryAttentionLayer(activation="relu", cross_attention=rope(rope_k_repeat=True, kv_in_dim=mem),
                                 d_model=hid, dim_feedforward=cfg["mem_ffn"], dropout=0.1, pos_enc_at_attn=False,
                                 pos_enc_at_cross_attn_keys=True, pos_enc_at_cross_attn_queries=False,
                                 self_attention=rope())
    mem_attn = MemoryAttention(d_model=hid, pos_enc_at_input=True, layer=layer, num_layers=cfg["mem_layers"])
    mem_enc = MemoryEncoder(out_dim=mem, in_dim=hid,
                            position_encoding=PositionEmbeddingSine(num_pos_feats=mem, normalize=True,
                                                                    temperature=10000),
                            mask_downsampler=MaskDownSampler(embed_dim=hid, kernel_size=3, stride=2, padding=1),
                            fuser=Fuser(CXBlock(dim=hid, kernel_size=7, padding=3, layer_scale_init_value=1e-6,
                                                use_dwconv=True), num_layers=2))
    decoder_args = dict(dynamic_multimask_via_stability=True, dynamic_multimask_stability_delta=0.05,
                        dynamic_multimask_stability_thresh=0.98)

    class Predictor(base or SAM2VideoPredictor):
        def _build_sam_heads(self):
            super()._build_sam_heads()
            # the released heads are fixed at mlp 2048 / iou hidden 256; a tiny model shrinks them too
            if cfg["dec_mlp"] != 2048 or cfg["iou_hidden"] != 256:
                self.sam_mask_decoder = MaskDecoder(
                    num_multimask_outputs=3,
                    transformer=TwoWayTransformer(depth=2, embedding_dim=hid, mlp_dim=cfg["dec_mlp"], num_heads=8),
                    transformer_dim=hid, iou_head_depth=3, iou_head_hidden_dim=cfg["iou_hidden"],
                    use_high_res_features=True, iou_prediction_use_sigmoid=True, pred_obj_scores=True,
                    pred_obj_scores_mlp=True, use_multimask_token_for_obj_ptr=True, **decoder_args)

    model = Predictor(
        image_encoder=encoder, memory_attention=mem_attn, memory_encoder=mem_enc, num_maskmem=7, image_size=s,
        sigmoid_scale_for_mem_enc=20.0, sigmoid_bias_for_mem_enc=-10.0, use_mask_input_as_output_without_sam=True,
        directly_add_no_mem_embed=True, no_obj_embed_spatial=True, use_high_res_features_in_sam=True,
        multimask_output_in_sam=True, iou_prediction_use_sigmoid=True, use_obj_ptrs_in_encoder=True,
        add_tpos_enc_to_obj_ptrs=True, proj_tpos_enc_in_obj_ptrs=True, use_signed_tpos_enc_to_obj_ptrs=True,
        only_obj_ptrs_in_the_past_for_eval=True, pred_obj_scores=True, pred_obj_scores_mlp=True,
        fixed_no_obj_ptr=True, multimask_output_for_tracking=True, use_multimask_token_for_obj_ptr=True,
        multimask_min_pt_num=0, multimask_max_pt_num=1, use_mlp_for_obj_ptr_proj=True,
        sam_mask_decoder_extra_args=decoder_args, binarize_mask_from_pts_for_mem_enc=True, fill_hole_area=0)
    return model


def build(cfg):
    """build_model with the deterministic weights (weight_values) and cfg's overrides."""
    import torch
    model = build_model(cfg)
    sd = model.state_dict()
    new = {k: torch.from_numpy(weight_values(k, tuple(v.shape))) for k, v in sd.items()}
    for k, value in cfg.get("overrides", {}).items():
        new[k] = torch.full_like(new[k], value)
    for k, v in new.items():
        assert torch.equal(v.half().float(), v), f"{k} not exact in fp16"
    model.load_state_dict(new, strict=True)
    return model.eval(), new


def run(config, out, device):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    import sam2.sam2_video_predictor as svp

    cfg = CONFIGS[config]
    s = cfg["image_size"]
    model, sd = build(cfg)
    model = model.to(device)
    os.makedirs(out, exist_ok=True)
    if config == "tiny":
        torch.save({"model": {k: v.half() for k, v in sd.items()}}, os.path.join(out, "checkpoint.pt"))
    with open(os.path.join(out, "keys.txt"), "w") as f:
        for k, v in sd.items():
            f.write(k + " " + ",".join(str(d) for d in v.shape) + "\n")

    rgb = [frame_rgb(t, s) for t in range(FRAMES)]
    mean = torch.tensor(MEAN, dtype=torch.float32)[:, None, None]
    std = torch.tensor(STD, dtype=torch.float32)[:, None, None]
    images = torch.zeros(FRAMES, 3, s, s, dtype=torch.float32)
    for t, im in enumerate(rgb):
        images[t] = torch.from_numpy(im / 255.0).permute(2, 0, 1)
    images -= mean
    images /= std
    svp.load_video_frames = lambda **kw: (images.to(device), s, s)

    with torch.inference_mode():
        state = model.init_state(video_path="<generated>")
        state["num_frames"] = 10 ** 9  # a stream: its length is unknown (pointers reach back 16 frames)
        (ax, ay, ah), _, _ = geometry(0, s)
        box = [ax - ah, ay - ah, ax + ah, ay + ah]
        model.add_new_points_or_box(state, frame_idx=0, obj_id=1, box=box)
        yielded = {}
        for t, ids, masks in model.propagate_in_video(state, start_frame_idx=0, max_frame_num_to_track=4):
            yielded[t] = (list(ids), masks.float().cpu().numpy())
        _, (bx, by, _), _ = geometry(5, s)
        point = [bx, by]
        model.add_new_points_or_box(state, frame_idx=5, obj_id=2, points=[point], labels=[1])
        for t, ids, masks in model.propagate_in_video(state, start_frame_idx=5, max_frame_num_to_track=6):
            yielded[t] = (list(ids), masks.float().cpu().numpy())
        assert sorted(yielded) == list(range(FRAMES)), sorted(yielded)

        lowres = np.full((FRAMES, 2, s // 4, s // 4), np.nan, np.float32)
        scores = np.full((FRAMES, 2), np.nan, np.float32)
        ptrs = np.full((FRAMES, 2, cfg["hidden"]), np.nan, np.float32)
        for obj in range(2):
            d = state["output_dict_per_obj"][obj]
            for t in range(FRAMES):
                o = d["cond_frame_outputs"].get(t) or d["non_cond_frame_outputs"].get(t)
                if o is None:
                    continue
                lowres[t, obj] = o["pred_masks"][0, 0].float().cpu().numpy()
                scores[t, obj] = o["object_score_logits"].float().cpu().numpy().reshape(-1)[0]
                ptrs[t, obj] = o["obj_ptr"][0].float().cpu().numpy()
        video = np.full((FRAMES, 2, s, s), np.nan, np.float32)
        for t, (ids, m) in yielded.items():
            for i, oid in enumerate(ids):
                video[t, oid - 1] = m[i, 0]
        np.save(os.path.join(out, "lowres_logits.npy"), lowres)
        np.save(os.path.join(out, "object_scores.npy"), scores)
        np.save(os.path.join(out, "object_pointers.npy"), ptrs)
        small = s <= 256  # at 1024 the masks and high-res maps are left out (they follow from the logits)
        if small:
            # video-resolution masks (logits > 0), bits packed with np.packbits over the flattened [12, 2, s, s]
            np.save(os.path.join(out, "masks_packed.npy"), np.packbits(np.where(np.isnan(video), 0, video > 0)))
        # intermediates of frame 0 / object 1 for locating a mismatch
        obj0 = state["output_dict_per_obj"][0]
        np.save(os.path.join(out, "maskmem_f0.npy"), obj0["cond_frame_outputs"][0]["maskmem_features"].float().cpu().numpy())
        np.save(os.path.join(out, "maskmem_f1.npy"), obj0["non_cond_frame_outputs"][1]["maskmem_features"].float().cpu().numpy())
        feats = model.forward_image(images[0:1].to(device))
        for i, f in enumerate(feats["backbone_fpn"]):
            if small or i == 2:
                np.save(os.path.join(out, f"fpn{i}_f0.npy"), f.float().cpu().numpy())
        if config == "tiny":
            np.save(os.path.join(out, "frame0_rgb.npy"), rgb[0])
    if config != "tiny":  # the Java test regenerates these weights from keys.txt
        for name in ("fpn0_f0.npy", "fpn1_f0.npy", "masks_packed.npy"):
            if config == "tiny_absent" and os.path.exists(os.path.join(out, name)):
                os.remove(os.path.join(out, name))
    meta = dict(config=config, image_size=s, frames=FRAMES, box_frame0_obj1=box, point_frame5_obj2=point,
                frame_checksums=[int(im.astype(np.int64).sum()) for im in rgb], device=str(device),
                torch=torch.__version__, settings=cfg,
                note="state['num_frames'] = 1e9 (stream semantics); fill_hole_area = 0; fp32, TF32 off")
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(config, "scores", np.round(scores, 3).tolist())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", choices=sorted(CONFIGS), default="tiny")
    p.add_argument("--out", required=True)
    p.add_argument("--device", default="cpu")
    a = p.parse_args()
    install_stubs()
    run(a.config, a.out, a.device)


if __name__ == "__main__":
    main()
