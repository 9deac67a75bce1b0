#!/usr/bin/env python3
"""Parity fixtures for samstream's SAM 3 CPU reference (io.samstream.gpu.sam3), made by Meta's `sam3`.

Builds Meta's SAM 3 image model (Sam3Image: ViT + neck, text encoder, fusion encoder, DETR decoder with presence
token, dot-product scoring, geometry encoder, mask head) from Meta's own classes, composed as
sam3/model_builder.py's build_sam3_image_model composes them, at one of two configurations:
  tiny     input 112, ViT 48 x 4 (2 heads, windows 4, global blocks 1 and 3), detector width 32 (4 heads, 2 + 2
           layers, 20 queries), text 64 x 2 over samstream's own test vocabulary (814 ids); its fp16 checkpoint
           (sam3_tiny.pt, {"model": {"detector.*": ...}} as sam3.pt) is written and committed (~1 MB);
  release  Meta's shapes (input 1008, ViT 1024 x 32, text 1024 x 24, detector 256 with 200 queries) over the
           official vocabulary; no checkpoint: the weights are regenerated from keys.txt in Java.
Weights are not torch's random numbers but the integer formulas of tools/sam2_fixtures (weight_values: every
parameter perturbed, exact in fp16), which the Java tests repeat (DeterministicWeights); the rotary tables are
left as the model computes them.

Then runs Meta's Sam3Processor path on a generated image: set_image, then per prompt the text encoder and
forward_grounding, as Sam3Processor.set_text_prompt / add_geometric_prompt do, and writes (.npy, little endian):
  image.npy [H, W, 3] uint8, model_input.npy [3, S, S] (after Sam3Processor's resize and normalization),
  trunk.npy [E, g, g] (ViT output), fpn0..2.npy [d, 4g, 4g] / [d, 2g, 2g] / [d, g, g] (neck levels kept; at
  the release shapes only fpn2, and the memory of the first prompt only, to keep the fixture ~30 MB),
  per prompt p<i>_*.npy: tokens [32] int, text [32, d] (language features), text_mask [32] (1 = padding),
  memory [g*g, d] (fusion encoder output), queries [Q, d] (decoder's last normed output), logits [Q],
  boxes [Q, 4] (cx, cy, w, h in 0..1), presence [1], top [K] int (the K best queries), masks [K, 4g, 4g]
  (their mask logits), final_boxes [K, 4] (xyxy pixels), final_scores [K] (sigmoid(logit) * sigmoid(presence)),
  final_masks [K, H, W] bits (np.packbits over the flattened masks after Sam3Processor's upsampling and > 0.5);
  keys.txt ("detector.<name> d0,d1,..." per tensor; complex tables with a trailing 2), meta.json (configuration,
  prompts, versions, what ran where).

Usage (where torch and torchvision are; Meta's sam3 source in a folder on --sam3, never committed):
  python3 make_sam3_fixtures.py --sam3 .ref/sam3_src --config tiny --out gpu/src/test/resources/fixtures/sam3/tiny
  python3 make_sam3_fixtures.py --sam3 .ref/sam3_src --config release --out $OUT/sam3_release
Modules the detector's import chain names but never uses here (iopath, einops, pycocotools, decord, cv2,
skimage, ...) are stubbed when missing; ftfy and regex must be importable (ftfy can come from --sam3's folder).
TF32 is switched off: fp32 throughout.
"""
import argparse
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import time
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TEST_VOCAB = os.path.join(REPO, "gpu/src/test/resources/fixtures/sam3/tokenizer/test_bpe_vocab.txt.gz")

CONFIGS = {
    "tiny": dict(image_size=112, patch=14, pretrain_size=56, embed=48, depth=4, heads=2, mlp_ratio=4.625,
                 window=4, global_att=(1, 3), d=32, det_heads=4, enc_layers=2, enc_ffn=64, dec_layers=2, dec_ffn=64,
                 queries=20, geo_layers=1, geo_ffn=64, scoring_hidden=64, text_width=64, text_heads=1,
                 text_layers=2, vocab="test", image_hw=(120, 160), top_k=3, save_checkpoint=True, all_maps=True,
                 prompts=[{"text": "red circle"}, {"text": "square"}, {"text": "a large blue triangle"},
                          {"text": "square", "boxes": [[0.62, 0.55, 0.25, 0.3]], "labels": [True]}]),
    "release": dict(image_size=1008, patch=14, pretrain_size=336, embed=1024, depth=32, heads=16, mlp_ratio=4.625,
                    window=24, global_att=(7, 15, 23, 31), d=256, det_heads=8, enc_layers=6, enc_ffn=2048,
                    dec_layers=6, dec_ffn=2048, queries=200, geo_layers=3, geo_ffn=2048, scoring_hidden=2048,
                    text_width=1024, text_heads=16, text_layers=24, vocab="official", image_hw=(480, 640), top_k=5,
                    save_checkpoint=False, all_maps=False,
                    prompts=[{"text": "person"}, {"text": "red car"}, {"text": "forklift"},
                             {"text": "forklift", "boxes": [[0.62, 0.55, 0.25, 0.3]], "labels": [True]}]),
}

STUBBED = ["iopath", "einops", "pycocotools", "decord", "cv2", "skimage", "huggingface_hub", "pkg_resources",
           "psutil", "submitit", "hydra", "omegaconf", "fvcore", "scipy", "pandas", "matplotlib", "tqdm", "triton",
           "cc_torch", "torch_generic_nms", "flash_attn_interface"]


def log(msg):
    print("[make_sam3_fixtures %s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


# ---- stand-ins for modules the import chain names but this script never uses ----
_CALLED = set()


class _StubMeta(type):
    """Any attribute of a stubbed module: a class (so it can be subclassed, decorated with, annotated by) whose
    calls give more stubs; the first call of each is logged, so that a stub the fixture path really used shows."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _StubMeta(cls.__name__ + "." + name, (), {})

    def __call__(cls, *args, **kwargs):
        if cls.__name__ not in _CALLED:
            _CALLED.add(cls.__name__)
            log("note: stub %s called (at import time this is a decorator; later it is a bug)" % cls.__name__)
        return _StubMeta(cls.__name__ + "()", (), {})


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _StubMeta(self.__name__ + "." + name, (), {})


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, roots):
        self.roots = set(roots)

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] in self.roots:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []
        if spec.name == "iopath.common.file_io":
            class PathManager:
                @staticmethod
                def open(path, mode="r", **kw):
                    return open(path, mode)
            module.g_pathmgr = PathManager()
        return module

    def exec_module(self, module):
        pass


def install_stubs():
    missing = [m for m in STUBBED if importlib.util.find_spec(m) is None]
    if missing:
        sys.meta_path.insert(0, _StubFinder(missing))
        log("stubbed missing modules: " + ", ".join(missing))


def import_meta(sam3_root):
    """Meta's sam3 package without running sam3/__init__.py (which builds everything through model_builder)."""
    sys.path.insert(0, sam3_root)  # ftfy / wcwidth may be carried next to the package
    pkg_dir = os.path.join(sam3_root, "sam3")
    if not os.path.isfile(os.path.join(pkg_dir, "model", "sam3_image.py")):
        sys.exit("--sam3 %s has no sam3/model/sam3_image.py: point it at the folder holding Meta's sam3 package"
                 % sam3_root)
    pkg = types.ModuleType("sam3")
    pkg.__path__ = [pkg_dir]
    sys.modules["sam3"] = pkg
    install_stubs()
    names = ["vitdet", "necks", "position_encoding", "text_encoder_ve", "tokenizer_ve", "vl_combiner", "encoder",
             "decoder", "model_misc", "maskformer_segmentation", "geometry_encoders", "sam3_image",
             "sam3_image_processor", "box_ops"]
    mods = {}
    for n in names:
        mods[n] = importlib.import_module("sam3.model." + n)
    log("imported Meta's sam3 from %s" % pkg_dir)
    return types.SimpleNamespace(**mods)


def load_weight_values():
    path = os.path.join(REPO, "tools", "sam2_fixtures", "make_sam2_fixtures.py")
    spec = importlib.util.spec_from_file_location("samstream_sam2_fixtures", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.weight_values


def build_model(m, cfg, vocab_path):
    """Sam3Image as build_sam3_image_model composes it, at cfg's shapes (eval mode, no instance interactivity)."""
    import torch.nn as nn
    d, h = cfg["d"], cfg["det_heads"]
    MHA = m.model_misc.MultiheadAttentionWrapper

    def pos_enc():
        # precompute_resolution would build its cache on "cuda"; the values are the same computed lazily
        return m.position_encoding.PositionEmbeddingSine(num_pos_feats=d, normalize=True, scale=None,
                                                         temperature=10000, precompute_resolution=None)

    vit = m.vitdet.ViT(img_size=cfg["image_size"], pretrain_img_size=cfg["pretrain_size"], patch_size=cfg["patch"],
                       embed_dim=cfg["embed"], depth=cfg["depth"], num_heads=cfg["heads"],
                       mlp_ratio=cfg["mlp_ratio"], norm_layer="LayerNorm", drop_path_rate=0.1, qkv_bias=True,
                       use_abs_pos=True, tile_abs_pos=True, global_att_blocks=cfg["global_att"], rel_pos_blocks=(),
                       use_rope=True, use_interp_rope=True, window_size=cfg["window"], pretrain_use_cls_token=True,
                       retain_cls_token=False, ln_pre=True, ln_post=False, return_interm_layers=False,
                       bias_patch_embed=False, compile_mode=None)
    neck = m.necks.Sam3DualViTDetNeck(position_encoding=pos_enc(), d_model=d, scale_factors=[4.0, 2.0, 1.0, 0.5],
                                      trunk=vit, add_sam2_neck=False)
    tokenizer = m.tokenizer_ve.SimpleTokenizer(bpe_path=vocab_path)
    text = m.text_encoder_ve.VETextEncoder(tokenizer=tokenizer, d_model=d, width=cfg["text_width"],
                                           heads=cfg["text_heads"], layers=cfg["text_layers"],
                                           vocab_size=tokenizer.vocab_size)
    backbone = m.vl_combiner.SAM3VLBackbone(visual=neck, text=text, scalp=1)
    enc_layer = m.encoder.TransformerEncoderLayer(
        activation="relu", d_model=d, dim_feedforward=cfg["enc_ffn"], dropout=0.1, pos_enc_at_attn=True,
        pos_enc_at_cross_attn_keys=False, pos_enc_at_cross_attn_queries=False, pre_norm=True,
        self_attention=MHA(num_heads=h, dropout=0.1, embed_dim=d, batch_first=True),
        cross_attention=MHA(num_heads=h, dropout=0.1, embed_dim=d, batch_first=True))
    encoder = m.encoder.TransformerEncoderFusion(layer=enc_layer, num_layers=cfg["enc_layers"], d_model=d,
                                                 num_feature_levels=1, frozen=False, use_act_checkpoint=True,
                                                 add_pooled_text_to_img_feat=False, pool_text_with_mask=True)
    dec_layer = m.decoder.TransformerDecoderLayer(
        activation="relu", d_model=d, dim_feedforward=cfg["dec_ffn"], dropout=0.1,
        cross_attention=MHA(num_heads=h, dropout=0.1, embed_dim=d), n_heads=h, use_text_cross_attention=True)
    # resolution / stride would build the box-bias coordinate cache on "cuda"; lazily it is the same
    decoder = m.decoder.TransformerDecoder(layer=dec_layer, num_layers=cfg["dec_layers"], num_queries=cfg["queries"],
                                           return_intermediate=True, box_refine=True, num_o2m_queries=0, dac=True,
                                           boxRPB="log", d_model=d, frozen=False, interaction_layer=None,
                                           dac_use_selfatt_ln=True, resolution=None, stride=None,
                                           use_act_checkpoint=True, presence_token=True)
    transformer = m.model_misc.TransformerWrapper(encoder=encoder, decoder=decoder, d_model=d)
    scoring = m.model_misc.DotProductScoring(
        d_model=d, d_proj=d, prompt_mlp=m.model_misc.MLP(input_dim=d, hidden_dim=cfg["scoring_hidden"], output_dim=d,
                                                         num_layers=2, dropout=0.1, residual=True,
                                                         out_norm=nn.LayerNorm(d)))
    pixel_decoder = m.maskformer_segmentation.PixelDecoder(num_upsampling_stages=3, interpolation_mode="nearest",
                                                           hidden_dim=d, compile_mode=None)
    seg_head = m.maskformer_segmentation.UniversalSegmentationHead(
        hidden_dim=d, upsampling_stages=3, aux_masks=False, presence_head=False, dot_product_scorer=None,
        act_ckpt=True, cross_attend_prompt=MHA(num_heads=h, dropout=0, embed_dim=d), pixel_decoder=pixel_decoder)
    geo_layer = m.encoder.TransformerEncoderLayer(
        activation="relu", d_model=d, dim_feedforward=cfg["geo_ffn"], dropout=0.1, pos_enc_at_attn=False,
        pre_norm=True, self_attention=MHA(num_heads=h, dropout=0.1, embed_dim=d, batch_first=False),
        pos_enc_at_cross_attn_queries=False, pos_enc_at_cross_attn_keys=True,
        cross_attention=MHA(num_heads=h, dropout=0.1, embed_dim=d, batch_first=False))
    geometry = m.geometry_encoders.SequenceGeometryEncoder(
        pos_enc=pos_enc(), encode_boxes_as_points=False, points_direct_project=True, points_pool=True,
        points_pos_enc=True, boxes_direct_project=True, boxes_pool=True, boxes_pos_enc=True, d_model=d,
        num_layers=cfg["geo_layers"], layer=geo_layer, use_act_ckpt=True, add_cls=True, add_post_encode_proj=True)
    model = m.sam3_image.Sam3Image(backbone=backbone, transformer=transformer, input_geometry_encoder=geometry,
                                   segmentation_head=seg_head, num_feature_levels=1, o2m_mask_predict=True,
                                   dot_prod_scoring=scoring, use_instance_query=False, multimask_output=True,
                                   inst_interactive_predictor=None, matcher=None)
    return model.eval()


def set_weights(model, weight_values):
    """Every parameter and float buffer from weight_values("detector." + name); complex tables stay computed."""
    import torch
    state = model.state_dict()
    keys = []
    for name, t in state.items():
        full = "detector." + name
        if t.is_complex():
            keys.append("%s %s" % (full, ",".join(str(s) for s in list(t.shape) + [2])))
            continue
        if not t.is_floating_point():
            raise SystemExit("unexpected %s buffer %s" % (t.dtype, full))
        t.copy_(torch.from_numpy(weight_values(full, tuple(t.shape))))
        keys.append("%s %s" % (full, ",".join(str(s) for s in t.shape)))
    return keys


def scene_rgb(h, w):
    """A gradient with a red circle, a blue square and a green triangle (integer formulas; Java may repeat it)."""
    y, x = np.mgrid[0:h, 0:w].astype(np.int64)
    r = 60 + (x * 80) // w
    g = 70 + (y * 60) // h
    b = 90 + ((x + y) * 50) // (h + w)
    s = min(h, w)
    circle = (x - w * 30 // 100) ** 2 + (y - h * 35 // 100) ** 2 <= (s * 18 // 100) ** 2
    square = (np.abs(x - w * 62 // 100) <= s * 14 // 100) & (np.abs(y - h * 55 // 100) <= s * 14 // 100)
    tri = (y >= h * 60 // 100) & (y <= h * 90 // 100) & (np.abs(x - w * 25 // 100) * 2 <= (y - h * 60 // 100))
    for sel, col in ((circle, (220, 40, 40)), (square, (40, 60, 220)), (tri, (40, 190, 70))):
        r, g, b = np.where(sel, col[0], r), np.where(sel, col[1], g), np.where(sel, col[2], b)
    return np.stack([r, g, b], axis=-1).astype(np.uint8)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sam3", required=True, help="folder holding Meta's sam3 package (and ftfy if not installed)")
    ap.add_argument("--config", choices=sorted(CONFIGS), required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default=None, help="cuda (default when available) or cpu")
    args = ap.parse_args()
    cfg = CONFIGS[args.config]
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()

    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    log("torch %s, device %s, config %s -> %s" % (torch.__version__, device, args.config, args.out))
    m = import_meta(args.sam3)
    import PIL.Image
    from torchvision.transforms import v2

    vocab = TEST_VOCAB if cfg["vocab"] == "test" else os.path.join(args.sam3, "sam3", "assets",
                                                                   "bpe_simple_vocab_16e6.txt.gz")
    if not os.path.isfile(vocab):
        sys.exit("vocabulary %s not found" % vocab)
    with torch.no_grad():
        model = build_model(m, cfg, vocab)
        log("built Sam3Image: %d parameters" % sum(p.numel() for p in model.parameters()))
        keys = set_weights(model, load_weight_values())
        log("deterministic weights set on %d tensors" % len(keys))
    with open(os.path.join(args.out, "keys.txt"), "w") as f:
        f.write("\n".join(keys) + "\n")
    if cfg["save_checkpoint"]:
        sd = {"detector." + k: (v.half() if v.is_floating_point() else v) for k, v in model.state_dict().items()}
        torch.save({"model": sd}, os.path.join(args.out, "sam3_tiny.pt"))
        log("wrote sam3_tiny.pt (fp16, exact)")
    model = model.to(device)

    def save(name, t):
        a = t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)
        if a.dtype == np.float64:
            a = a.astype(np.float32)
        np.save(os.path.join(args.out, name + ".npy"), a)

    h, w = cfg["image_hw"]
    img = scene_rgb(h, w)
    save("image", img)
    S = cfg["image_size"]
    processor = m.sam3_image_processor.Sam3Processor(model, resolution=S, device=device, confidence_threshold=0.5)
    with torch.inference_mode():
        pil = PIL.Image.fromarray(img)
        model_input = processor.transform(v2.functional.to_image(pil).to(device))
        save("model_input", model_input)
        state = processor.set_image(pil)
        log("set_image: backbone at %s" % [tuple(x.shape) for x in state["backbone_out"]["backbone_fpn"]])
        # the large maps of the release shapes (trunk 21 MB, fpn0 85 MB, fpn1 21 MB) stay out of the fixture
        if cfg["all_maps"]:
            save("trunk", model.backbone.vision_backbone.trunk(model_input.unsqueeze(0))[-1][0])
        for i, f in enumerate(state["backbone_out"]["backbone_fpn"]):
            if cfg["all_maps"] or i == 2:
                save("fpn%d" % i, f[0])
        prompts = []
        for i, p in enumerate(cfg["prompts"]):
            text_out = model.backbone.forward_text([p["text"]], device=device)
            state["backbone_out"].update(text_out)
            geo = model._get_dummy_prompt()
            if "boxes" in p:
                boxes = torch.tensor(p["boxes"], device=device, dtype=torch.float32).view(-1, 1, 4)
                labels = torch.tensor(p["labels"], device=device, dtype=torch.bool).view(-1, 1)
                geo.append_boxes(boxes, labels)
            out = model.forward_grounding(backbone_out=state["backbone_out"], find_input=processor.find_stage,
                                          geometric_prompt=geo, find_target=None)
            tokens = model.backbone.language_backbone.tokenizer([p["text"]], context_length=32)[0]
            logits = out["pred_logits"][0, :, 0]
            boxes = out["pred_boxes"][0]
            presence = out["presence_logit_dec"][0]
            k = min(cfg["top_k"], logits.numel())
            top = torch.argsort(logits, descending=True)[:k]
            masks = out["pred_masks"][0, top]
            probs = logits.sigmoid() * presence.sigmoid()
            xyxy = m.box_ops.box_cxcywh_to_xyxy(boxes[top]) * torch.tensor([w, h, w, h], device=device)
            up = torch.nn.functional.interpolate(masks.unsqueeze(1), (h, w), mode="bilinear",
                                                 align_corners=False).sigmoid()[:, 0]
            kept = int((probs > processor.confidence_threshold).sum())
            pre = "p%d_" % i
            save(pre + "tokens", tokens.to(torch.int64) if hasattr(tokens, "to") else np.asarray(tokens, np.int64))
            save(pre + "text", state["backbone_out"]["language_features"][:, 0])
            save(pre + "text_mask", state["backbone_out"]["language_mask"][0].to(torch.uint8))
            if cfg["all_maps"] or i == 0:
                save(pre + "memory", out["encoder_hidden_states"][:, 0])
            save(pre + "queries", out["queries"][0])
            save(pre + "logits", logits)
            save(pre + "boxes", boxes)
            save(pre + "presence", presence)
            save(pre + "top", top.to(torch.int64))
            save(pre + "masks", masks)
            save(pre + "final_boxes", xyxy)
            save(pre + "final_scores", probs[top])
            save(pre + "final_masks", np.packbits((up > 0.5).cpu().numpy().reshape(-1)))
            prompts.append(dict(p, kept_at_threshold=kept, presence=float(presence[0]),
                                best_logit=float(logits[top[0]])))
            log("prompt %d %r: presence %.4f, best logit %.4f (query %d), %d over the threshold"
                % (i, p["text"], float(presence[0]), float(logits[top[0]]), int(top[0]), kept))
    meta = dict(config=args.config, shapes={k: v for k, v in cfg.items() if k != "prompts"}, prompts=prompts,
                image_hw=[h, w], top_k=cfg["top_k"], vocabulary=os.path.basename(vocab), device=device,
                torch=torch.__version__, numpy=np.__version__, python=sys.version.split()[0],
                made_by="tools/sam3_fixtures/make_sam3_fixtures.py with Meta's sam3 (facebookresearch/sam3)",
                seconds=round(time.time() - t0, 1))
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    total = sum(os.path.getsize(os.path.join(args.out, n)) for n in os.listdir(args.out))
    log("done in %.1f s: %d files, %.2f MB in %s" % (time.time() - t0, len(os.listdir(args.out)), total / 1e6,
                                                     args.out))


if __name__ == "__main__":
    main()
