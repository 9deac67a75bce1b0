#!/usr/bin/env python3
"""Trains samstream's demo model: a small SAM (Meta's own classes) on synthetic scenes (scenes.py).

Runs where PyTorch and a GPU are (the GPU machine). Needs Meta's ``segment_anything`` on PYTHONPATH.

Model: Meta's ``ImageEncoderViT`` / ``PromptEncoder`` / ``MaskDecoder`` / ``TwoWayTransformer`` / ``Sam``,
built as tools/fixtures/make_sam_parity_fixtures.py builds them, in a small shape (CONFIG below): a 512
input, a 6-block ViT of width 192, and the standard prompt encoder and mask decoder at prompt width 128
(decoder MLP 1024) so the fp16 checkpoint stays under 10 MB.

Training (bf16 autocast, AdamW, cosine learning rate over a wall-clock budget): each step renders a
batch of scenes, pre-processes them exactly as SAM does (ResizeLongestSide with antialiased bilinear,
rounded to uint8 like the reference's PIL resize, then ``Sam.preprocess``: normalize, pad to the model
size), encodes them once and decodes four prompt groups per image, all sampled from the ground truth:
  box        a jittered (sometimes loosened or whole-shape) box; single-mask output
  point      one point: in the object (best of the 3 multimask outputs, as SAM trains it) or, 15% of
             the time, on the background with an empty target and IoU 0 (so automatic discovery's
             point grid gets low predicted IoU there)
  multi      2-3 positive/negative points, or a box plus one positive point; single-mask output
  box+mask   a box plus the box group's own low-res logits, shifted and scaled, as the dense mask
             prompt (what prompt tracking feeds from the previous frame); single-mask output
The box, multi and box+mask groups also train the 3 multimask outputs (best of 3, half weight), so the
tracker can choose among them. Mask loss: 20 x focal + dice on the low-res logits upsampled to the input
size; IoU head: MSE to the actual IoU of each of the 4 outputs.

Afterwards it saves the state_dict with fp16 tensors (torch.save, the official checkpoint layout), then
evaluates that fp16 checkpoint in fp32 on held-out scenes (fixed seed): mean IoU at the original
resolution (Sam.postprocess_masks) for box prompts and single-point prompts, plus a cross-check through
Meta's SamPredictor (PIL resize path), and writes overlay PNGs and train_log.txt.

Usage (GPU machine):
  PYTHONPATH=path/to/segment-anything python3 tools/demo_model/train_demo_model.py --minutes 6 --out OUT
  --smoke: a few steps and a small evaluation, every code path once.
"""
import argparse
import json
import math
import os
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from segment_anything import SamPredictor
from segment_anything.modeling import ImageEncoderViT, MaskDecoder, PromptEncoder, Sam, TwoWayTransformer
from segment_anything.utils.transforms import ResizeLongestSide

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scenes import MAX_SHAPES, SceneGenerator  # noqa: E402

CONFIG = dict(img_size=512, patch=16, embed_dim=192, depth=6, heads=6, window=8, global_idx=[2, 5], mlp_ratio=4.0,
              prompt_dim=128, mask_in_chans=16, dec_depth=2, dec_heads=8, dec_mlp=1024, iou_hidden=256)
MAX_CHECKPOINT_BYTES = 10 * 1000 * 1000
MIN_TRAIN_AREA = 40  # pixels in the model's input frame: smaller objects are not prompted in training
TRAIN_SEED = 20240601
EVAL_SEED = 777_000_111
PIXEL_MEAN = [123.675, 116.28, 103.53]
PIXEL_STD = [58.395, 57.12, 57.375]

torch.backends.cuda.matmul.allow_tf32 = False  # fp32 parts (prompt encoder, evaluation) stay fp32


def build_sam(c):
    patch = c["patch"]
    grid = c["img_size"] // patch
    p = c["prompt_dim"]
    return Sam(
        image_encoder=ImageEncoderViT(
            depth=c["depth"], embed_dim=c["embed_dim"], img_size=c["img_size"], mlp_ratio=c["mlp_ratio"],
            norm_layer=partial(torch.nn.LayerNorm, eps=1e-6), num_heads=c["heads"], patch_size=patch,
            qkv_bias=True, use_rel_pos=True, global_attn_indexes=c["global_idx"], window_size=c["window"],
            out_chans=p),
        prompt_encoder=PromptEncoder(embed_dim=p, image_embedding_size=(grid, grid),
                                     input_image_size=(c["img_size"], c["img_size"]), mask_in_chans=c["mask_in_chans"]),
        mask_decoder=MaskDecoder(
            num_multimask_outputs=3,
            transformer=TwoWayTransformer(depth=c["dec_depth"], embedding_dim=p, mlp_dim=c["dec_mlp"],
                                          num_heads=c["dec_heads"]),
            transformer_dim=p, iou_head_depth=3, iou_head_hidden_dim=c["iou_hidden"]),
        pixel_mean=PIXEL_MEAN,
        pixel_std=PIXEL_STD,
    )


def encoder_gflops(c):
    """Multiply-adds x 2 of one image through the encoder (linear layers, attention, neck)."""
    t = (c["img_size"] // c["patch"]) ** 2
    d, p, w = c["embed_dim"], c["prompt_dim"], c["window"]
    mlp = int(d * c["mlp_ratio"])
    macs = t * d * 3 * c["patch"] ** 2
    for i in range(c["depth"]):
        span = t if i in c["global_idx"] else w * w
        macs += t * d * 3 * d + t * d * d + 2 * t * d * mlp + 2 * t * span * d
    macs += t * d * p + t * 9 * p * p
    return 2 * macs / 1e9


# ---------------------------------------------------------------- data

def preprocess_chunk(sam, images_nhwc, size):
    """uint8 [n,H,W,3] -> normalized, padded [n,3,S,S], as SamPredictor.set_image does it (resize longest
    side with antialiased bilinear and rounding to uint8 as PIL does, then Sam.preprocess)."""
    n, h, w, _ = images_nhwc.shape
    nh, nw = ResizeLongestSide.get_preprocess_shape(h, w, size)
    x = images_nhwc.permute(0, 3, 1, 2).float()
    x = F.interpolate(x, (nh, nw), mode="bilinear", align_corners=False, antialias=True).round().clamp(0, 255)
    return sam.preprocess(x), (nh, nw)


def resize_masks(masks, nh, nw, size):
    """bool [n,M,H,W] -> bool [n,M,S,S] in the model's input frame (resized like the image, zero padding)."""
    m = F.interpolate(masks.float(), (nh, nw), mode="bilinear", align_corners=False, antialias=True) > 0.5
    return F.pad(m, (0, size - nw, 0, size - nh))


def mask_boxes(m):
    """bool [..., H, W] -> float [..., 4] (x0, y0, x1, y1), inclusive pixel indices; zeros when empty."""
    h, w = m.shape[-2:]
    cols, rows = m.any(-2), m.any(-1)
    xs = torch.arange(w, device=m.device)
    ys = torch.arange(h, device=m.device)
    box = torch.stack([torch.where(cols, xs, w).amin(-1), torch.where(rows, ys, h).amin(-1),
                       torch.where(cols, xs, -1).amax(-1), torch.where(rows, ys, -1).amax(-1)], -1).float()
    return torch.where(cols.any(-1, keepdim=True), box, torch.zeros_like(box))


def make_batch(gen, sam, n_images, chunk, size, tp_frac):
    imgs, gts, amods, hws = [], [], [], []
    for _ in range(n_images // chunk):
        (w, h), style = gen.pick_frame(tp_frac)
        sc = gen.render(chunk, w, h, style)
        x, (nh, nw) = preprocess_chunk(sam, sc["images"], size)
        imgs.append(x)
        gts.append(resize_masks(sc["visible"], nh, nw, size))
        amods.append(resize_masks(sc["amodal"], nh, nw, size))
        hws.append(torch.tensor([[nh, nw]] * chunk, device=x.device))
        del sc
    gt = torch.cat(gts)
    amodal = torch.cat(amods)
    hw = torch.cat(hws)
    area = gt.sum((-1, -2))
    return dict(images=torch.cat(imgs), gt=gt, hw=hw, eligible=area >= MIN_TRAIN_AREA,
                box=mask_boxes(gt), amodal_box=mask_boxes(amodal))


def pick_objects(gen, eligible):
    r = torch.where(eligible, gen.rand(*eligible.shape), torch.full(eligible.shape, -1.0, device=eligible.device))
    return r.argmax(1), eligible.any(1)


def sample_points(gen, region):
    """One random pixel of each region [N,H,W] -> (x, y) float [N,2] (pixel indices), found [N]."""
    n, h, w = region.shape
    r = torch.where(region.flatten(1), gen.rand(n, h * w), torch.full((1,), -1.0, device=region.device))
    val, idx = r.max(1)
    return torch.stack([(idx % w).float(), torch.div(idx, w, rounding_mode="floor").float()], -1), val >= 0


def valid_region(hw, size):
    ar = torch.arange(size, device=hw.device)
    return (ar.view(1, size, 1) < hw[:, 0].view(-1, 1, 1)) & (ar.view(1, 1, size) < hw[:, 1].view(-1, 1, 1))


def jitter_boxes(gen, box, hw, max_px, loose_p, shift=0.0):
    """SAM-style box noise (std 10% of the side, at most max_px), sometimes loosened (like
    TestPatternSource's boxes around boxes and triangles), optionally shifted (a tracker's prediction)."""
    n = box.shape[0]
    w = (box[:, 2] - box[:, 0]).clamp(min=2)
    h = (box[:, 3] - box[:, 1]).clamp(min=2)
    side = torch.stack([w, h, w, h], 1)
    b = box + (gen.normal(n, 4) * 0.1 * side).clamp(-max_px, max_px)
    grow = gen.uniform(0, 0.15, n, 4) * side * torch.tensor([-1.0, -1.0, 1.0, 1.0], device=box.device)
    b = torch.where(gen.coin(loose_p, n, 1), b + grow, b)
    if shift > 0:
        b = b + (gen.uniform(-shift, shift, n, 2) * torch.stack([w, h], 1)).repeat(1, 2)
    x_hi = (hw[:, 1] - 1).float()
    y_hi = (hw[:, 0] - 1).float()
    x0 = torch.minimum(b[:, 0], b[:, 2]).clamp(min=0)
    x1 = torch.maximum(b[:, 0], b[:, 2])
    y0 = torch.minimum(b[:, 1], b[:, 3]).clamp(min=0)
    y1 = torch.maximum(b[:, 1], b[:, 3])
    x0, x1 = torch.minimum(x0, x_hi), torch.minimum(x1, x_hi)
    y0, y1 = torch.minimum(y0, y_hi), torch.minimum(y1, y_hi)
    return torch.stack([x0, y0, torch.maximum(x1, x0 + 1), torch.maximum(y1, y0 + 1)], 1)


# ---------------------------------------------------------------- model pieces

def decode(sam, src, image_pe, sparse, dense):
    """MaskDecoder.predict_masks with the image embedding already given once per prompt (``src``
    [N,C,h,w]), so prompts of different images decode in one batch. Same parameters, same arithmetic:
    SAM's own forward repeats one image's embedding per prompt, which is what ``src`` holds then.
    Returns all 4 outputs: masks [N,4,4h,4w] logits, iou [N,4]."""
    dec = sam.mask_decoder
    n = sparse.shape[0]
    output_tokens = torch.cat([dec.iou_token.weight, dec.mask_tokens.weight], 0).unsqueeze(0).expand(n, -1, -1)
    tokens = torch.cat((output_tokens, sparse), 1)
    src = src + dense
    pos_src = image_pe.expand(n, -1, -1, -1)
    b, c, h, w = src.shape
    hs, src = dec.transformer(src, pos_src, tokens)
    iou_token_out = hs[:, 0, :]
    mask_tokens_out = hs[:, 1:1 + dec.num_mask_tokens, :]
    src = src.transpose(1, 2).reshape(b, c, h, w)
    up = dec.output_upscaling(src)
    hyper = torch.stack([dec.output_hypernetworks_mlps[i](mask_tokens_out[:, i, :])
                         for i in range(dec.num_mask_tokens)], 1)
    b, c, h, w = up.shape
    masks = (hyper @ up.reshape(b, c, h * w)).reshape(b, -1, h, w)
    return masks, dec.iou_prediction_head(iou_token_out)


@torch.no_grad()
def check_decode_matches_reference(sam, device):
    """decode() must give what Meta's MaskDecoder.forward gives for one image and several prompts."""
    sam.eval()
    x = torch.randn(1, 3, sam.image_encoder.img_size, sam.image_encoder.img_size, device=device)
    emb = sam.image_encoder(x)
    boxes = torch.tensor([[10.0, 20.0, 200.0, 300.0], [100.0, 50.0, 150.0, 90.0], [0.0, 0.0, 500.0, 400.0]],
                         device=device)
    sparse, dense = sam.prompt_encoder(points=None, boxes=boxes, masks=None)
    pe = sam.prompt_encoder.get_dense_pe()
    ref_m, ref_i = sam.mask_decoder(image_embeddings=emb, image_pe=pe, sparse_prompt_embeddings=sparse,
                                    dense_prompt_embeddings=dense, multimask_output=True)
    m, i = decode(sam, emb.expand(3, -1, -1, -1), pe, sparse, dense)
    diff = max(float((m[:, 1:] - ref_m).abs().max()), float((i[:, 1:] - ref_i).abs().max()))
    sam.train()
    if not diff < 5e-2:
        raise AssertionError(f"decode() differs from MaskDecoder.forward by {diff}")
    return diff


# ---------------------------------------------------------------- losses

def mask_losses(logits, gt, size):
    """logits [N,K,L,L] low-res, gt bool [N,S,S] -> loss [N,K] (20 focal + dice), iou [N,K] (no grad)."""
    up = F.interpolate(logits.float(), (size, size), mode="bilinear", align_corners=False)
    t = gt[:, None].float().expand_as(up)
    p = torch.sigmoid(up)
    ce = F.binary_cross_entropy_with_logits(up, t, reduction="none")
    p_t = p * t + (1 - p) * (1 - t)
    alpha_t = 0.25 * t + 0.75 * (1 - t)
    focal = (alpha_t * ce * (1 - p_t) ** 2).mean((-1, -2))
    inter = (p * t).sum((-1, -2))
    dice = 1 - (2 * inter + 1) / (p.sum((-1, -2)) + t.sum((-1, -2)) + 1)
    with torch.no_grad():
        pred = up > 0
        g = gt[:, None]
        i = (pred & g).sum((-1, -2)).float()
        u = (pred | g).sum((-1, -2)).float()
        iou = i / u.clamp(min=1)
    return 20 * focal + dice, iou


def group_loss(logits, iou_pred, gt, ok, size, primary, iou_zero=None):
    """primary: 'single' (output 0, plus best of the 3 multimask outputs at half weight),
    'multi' (best of 3, plus output 0 at half weight)."""
    loss, iou = mask_losses(logits, gt, size)
    best3 = loss[:, 1:].min(1).values
    per = loss[:, 0] + 0.5 * best3 if primary == "single" else best3 + 0.5 * loss[:, 0]
    target = iou if iou_zero is None else torch.where(iou_zero[:, None], torch.zeros_like(iou), iou)
    per = per + ((iou_pred.float() - target) ** 2).mean(1)
    w = ok.float()
    return (per * w).sum() / w.sum().clamp(min=1), (iou[:, 0] * w).sum() / w.sum().clamp(min=1)


# ---------------------------------------------------------------- training

def train_step(sam, gen, batch, size, multi_mode, n_multi):
    dev = batch["images"].device
    B = batch["images"].shape[0]
    ar = torch.arange(B, device=dev)
    gt_all, elig, hw = batch["gt"], batch["eligible"], batch["hw"]
    region = valid_region(hw, size)
    max_px = 10.0 * size / 512

    with torch.autocast("cuda", dtype=torch.bfloat16):
        emb = sam.image_encoder(batch["images"])

    pe_mod = sam.prompt_encoder
    results = {}
    # 1. box
    oa, ok_a = pick_objects(gen, elig)
    gt_a = gt_all[ar, oa]
    use_amodal = gen.coin(0.3, B, 1)
    base_box = torch.where(use_amodal, batch["amodal_box"][ar, oa], batch["box"][ar, oa])
    box_a = jitter_boxes(gen, base_box, hw, max_px, loose_p=0.3)
    # 2. single point (in the object, or on the background with an empty target)
    ob, ok_b = pick_objects(gen, elig)
    gt_b_obj = gt_all[ar, ob]
    pos_b, _ = sample_points(gen, gt_b_obj)
    bg_region = region & ~gt_all.any(1)
    bg_pt, bg_found = sample_points(gen, bg_region)
    is_bg = gen.coin(0.15, B) & bg_found
    pt_b = torch.where(is_bg[:, None], bg_pt, pos_b)
    gt_b = gt_b_obj & ~is_bg[:, None, None]
    ok_b = ok_b | is_bg
    # 3. multi: 2-3 points, or a box plus a positive point
    oc, ok_c = pick_objects(gen, elig)
    gt_c = gt_all[ar, oc]
    first, _ = sample_points(gen, gt_c)
    if multi_mode == "points":
        coords, labels = [first], [torch.ones(B, device=dev)]
        near = region & ~gt_c
        bx = batch["box"][ar, oc]
        grow = 0.2 * torch.stack([bx[:, 2] - bx[:, 0], bx[:, 3] - bx[:, 1]], 1) + 8
        xs = torch.arange(size, device=dev).view(1, 1, size)
        ys = torch.arange(size, device=dev).view(1, size, 1)
        in_box = ((xs >= (bx[:, 0] - grow[:, 0]).view(-1, 1, 1)) & (xs <= (bx[:, 2] + grow[:, 0]).view(-1, 1, 1))
                  & (ys >= (bx[:, 1] - grow[:, 1]).view(-1, 1, 1)) & (ys <= (bx[:, 3] + grow[:, 1]).view(-1, 1, 1)))
        for _ in range(n_multi - 1):
            pos, _ = sample_points(gen, gt_c)
            neg_near, f_near = sample_points(gen, near & in_box)
            neg_far, f_far = sample_points(gen, near)
            neg = torch.where((f_near & gen.coin(0.7, B))[:, None], neg_near, neg_far)
            negative = gen.coin(0.6, B) & (f_near | f_far)
            coords.append(torch.where(negative[:, None], neg, pos))
            labels.append((~negative).float())
        pts_c = (torch.stack(coords, 1), torch.stack(labels, 1))
        box_c = None
    else:
        pts_c = (first[:, None], torch.ones(B, 1, device=dev))
        box_c = jitter_boxes(gen, batch["box"][ar, oc], hw, max_px, loose_p=0.2)

    with torch.autocast("cuda", enabled=False):
        image_pe = pe_mod.get_dense_pe()
        sp_a, de_a = pe_mod(points=None, boxes=box_a, masks=None)
        sp_b, de_b = pe_mod(points=(pt_b[:, None], torch.ones(B, 1, device=dev)), boxes=None, masks=None)
        sp_c, de_c = pe_mod(points=pts_c, boxes=box_c, masks=None)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        m_a, i_a = decode(sam, emb, image_pe, sp_a, de_a)
        m_b, i_b = decode(sam, emb, image_pe, sp_b, de_b)
        m_c, i_c = decode(sam, emb, image_pe, sp_c, de_c)

    # 4. box + mask prompt: group 1's own logits (or the ground truth's), moved and rescaled a little,
    # with a box off by up to 10% (what the tracker's Kalman prediction gives).
    with torch.no_grad():
        prev = m_a[:, :1].float()
        lr = prev.shape[-1]
        from_gt = F.avg_pool2d(gt_a[:, None].float(), size // lr) * 16 - 8
        prev = torch.where(gen.coin(0.25, B, 1, 1, 1), from_gt, prev)
        s = gen.uniform(0.9, 1.1, B)
        theta = torch.zeros(B, 2, 3, device=dev)
        theta[:, 0, 0] = s
        theta[:, 1, 1] = s
        theta[:, :, 2] = gen.uniform(-0.08, 0.08, B, 2)
        grid = F.affine_grid(theta, list(prev.shape), align_corners=False)
        mask_in = F.grid_sample(prev, grid, mode="bilinear", padding_mode="border", align_corners=False)
        box_d = jitter_boxes(gen, batch["box"][ar, oa], hw, max_px, loose_p=0.2, shift=0.1)
    with torch.autocast("cuda", enabled=False):
        sp_d, de_d = pe_mod(points=None, boxes=box_d, masks=mask_in)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        m_d, i_d = decode(sam, emb, image_pe, sp_d, de_d)

    l_a, iou_a = group_loss(m_a, i_a, gt_a, ok_a, size, "single")
    l_b, iou_b = group_loss(m_b, i_b, gt_b, ok_b, size, "multi", iou_zero=is_bg)
    l_c, iou_c = group_loss(m_c, i_c, gt_c, ok_c, size, "single")
    l_d, iou_d = group_loss(m_d, i_d, gt_a, ok_a, size, "single")
    total = l_a + l_b + l_c + l_d
    results.update(loss=total, box=l_a, point=l_b, multi=l_c, boxmask=l_d, iou_box=iou_a, iou_boxmask=iou_d)
    return total, results


def param_groups(sam, wd):
    no_decay_names = ("pos_embed", "rel_pos", "point_embeddings", "not_a_point_embed", "no_mask_embed", "iou_token",
                      "mask_tokens")
    decay, no_decay = [], []
    for name, p in sam.named_parameters():
        if p.ndim < 2 or any(k in name for k in no_decay_names):
            no_decay.append(p)
        else:
            decay.append(p)
    return [dict(params=decay, weight_decay=wd), dict(params=no_decay, weight_decay=0.0)]


def fp16_state_dict(sam):
    return {k: v.detach().to(torch.float16).cpu().contiguous() for k, v in sam.state_dict().items()}


# ---------------------------------------------------------------- evaluation

def ious(pred, gt):
    """bool [..., H, W] x2 -> IoU [...] (1 when both are empty)."""
    i = (pred & gt).sum((-1, -2)).float()
    u = (pred | gt).sum((-1, -2)).float()
    return torch.where(u > 0, i / u.clamp(min=1), torch.ones_like(u))


EVAL_SETS_FULL = [
    # name, style, sizes (width, height), chunks of 8 frames
    ("testpattern-320x240", "testpattern", [(320, 240)], 16),
    ("testpattern-1280x720", "testpattern", [(1280, 720)], 4),
    ("mixed", "mixed", [(320, 240), (640, 480), (1280, 720), (480, 640), (960, 540), (512, 512)], 24),
]


@torch.no_grad()
def evaluate(sam, device, eval_sets, overlay_dir=None, log=print):
    """mIoU per prompt kind on held-out scenes; the fp32 model, as samstream's Java backends run it."""
    sam.eval()
    size = sam.image_encoder.img_size
    gen = SceneGenerator(EVAL_SEED, device)
    chunk = 8
    report = {}
    pe = sam.prompt_encoder.get_dense_pe()
    for name, style, sizes, n_chunks in eval_sets:
        acc = {k: [] for k in ("box", "pattern_box", "point", "point_oracle", "box_then_mask", "point_pred_iou",
                               "bg_point_pred_iou", "box_pred_iou_err")}
        for ci in range(n_chunks):
            w, h = sizes[ci % len(sizes)]
            sc = gen.render(chunk, w, h, style)
            x, (nh, nw) = preprocess_chunk(sam, sc["images"], size)
            emb = sam.image_encoder(x)
            vis = sc["visible"]
            area = vis.sum((-1, -2))
            elig = sc["present"] & (area >= max(40, 0.0015 * h * w))
            ii, jj = elig.nonzero(as_tuple=True)
            if ii.numel() == 0:
                continue
            gt = vis[ii, jj]
            src = emb[ii]
            scale = torch.tensor([nw / w, nh / h, nw / w, nh / h], device=device)

            def run(points=None, boxes=None, masks=None, multimask=False):
                sp, de = sam.prompt_encoder(points=points, boxes=boxes, masks=masks)
                lowres, iou_pred = decode(sam, src, pe, sp, de)
                sel = slice(1, 4) if multimask else slice(0, 1)
                full = sam.postprocess_masks(lowres[:, sel], (nh, nw), (h, w)) > 0
                return full, iou_pred[:, sel], lowres[:, sel]

            tight = mask_boxes(gt)
            m, ip, lowres = run(boxes=tight * scale)
            box_iou = ious(m[:, 0], gt)
            acc["box"].append(box_iou)
            acc["box_pred_iou_err"].append((ip[:, 0] - box_iou).abs())
            m2, _, _ = run(boxes=tight * scale, masks=lowres)
            acc["box_then_mask"].append(ious(m2[:, 0], gt))
            if style == "testpattern":
                m3, _, _ = run(boxes=sc["pattern_box"][ii, jj] * scale)
                acc["pattern_box"].append(ious(m3[:, 0], gt))
            pts, _ = sample_points(gen, gt)
            m4, ip4, _ = run(points=(pts[:, None] * scale[:2], torch.ones(len(ii), 1, device=device)), multimask=True)
            all_iou = ious(m4, gt[:, None])
            pick = ip4.argmax(1)
            acc["point"].append(all_iou[torch.arange(len(ii), device=device), pick])
            acc["point_oracle"].append(all_iou.max(1).values)
            acc["point_pred_iou"].append(ip4.max(1).values)
            bg, found = sample_points(gen, ~vis.any(1))
            if bool(found.any()):
                src_bg = emb[found]
                sp, de = sam.prompt_encoder(points=(bg[found][:, None] * scale[:2],
                                                    torch.ones(int(found.sum()), 1, device=device)),
                                            boxes=None, masks=None)
                _, ipb = decode(sam, src_bg, pe, sp, de)
                acc["bg_point_pred_iou"].append(ipb[:, 1:].max(1).values)
            if overlay_dir is not None and ci == 0:
                sel = ii == 0
                write_overlay(Path(overlay_dir) / f"eval-{name}.png", sc["images"][0], gt[sel], m[sel, 0],
                              tight[sel], upscale=2 if w <= 400 else 1)
        report[name] = {k: (round(float(torch.cat(v).mean()), 4) if v else None) for k, v in acc.items()}
        report[name]["objects"] = int(sum(t.numel() for t in acc["box"]))
        log(f"eval {name}: {json.dumps(report[name])}")
    sam.train()
    return report


def write_overlay(path, image, gt, pred, boxes, upscale=1):
    """GT masks (left) and predicted masks from box prompts (right), over the frame; the prompt boxes drawn."""
    from PIL import Image, ImageDraw
    colours = np.array([[255, 60, 60], [60, 220, 90], [70, 110, 255], [250, 220, 40], [240, 90, 230], [40, 220, 230]],
                       dtype=np.float32)
    base = image.cpu().numpy().astype(np.float32)
    halves = []
    for masks in (gt.cpu().numpy(), pred.cpu().numpy()):
        img = base.copy()
        for k, mk in enumerate(masks):
            img[mk] = 0.45 * img[mk] + 0.55 * colours[k % len(colours)]
        halves.append(img)
    both = np.concatenate([halves[0], np.full((base.shape[0], 4, 3), 255, np.float32), halves[1]], 1)
    pil = Image.fromarray(both.clip(0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(pil)
    off = base.shape[1] + 4
    for b in boxes.cpu().numpy():
        draw.rectangle([b[0] + off, b[1], b[2] + off, b[3]], outline=(255, 255, 255))
    if upscale > 1:
        pil = pil.resize((pil.width * upscale, pil.height * upscale), Image.NEAREST)
    pil.save(path)


@torch.no_grad()
def predictor_check(sam, device, n_images, log=print):
    """Box prompts through Meta's SamPredictor (numpy image, PIL resize): the path the Java port mirrors."""
    sam.eval()
    predictor = SamPredictor(sam)
    gen = SceneGenerator(EVAL_SEED + 1, device)
    sc = gen.render(n_images, 320, 240, "testpattern")
    vals = []
    for k in range(n_images):
        predictor.set_image(sc["images"][k].cpu().numpy())
        for j in range(MAX_SHAPES):
            gt = sc["visible"][k, j]
            if not bool(sc["present"][k, j]) or int(gt.sum()) < 40:
                continue
            box = mask_boxes(gt).cpu().numpy()
            masks, _, _ = predictor.predict(box=box, multimask_output=False)
            vals.append(float(ious(torch.as_tensor(masks[0], device=device), gt)))
    sam.train()
    out = round(float(np.mean(vals)), 4) if vals else None
    log(f"SamPredictor box mIoU on {len(vals)} testpattern 320x240 objects: {out}")
    return out


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--minutes", type=float, default=6.0, help="wall-clock training budget")
    ap.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: time only)")
    ap.add_argument("--batch", type=int, default=64, help="images per step")
    ap.add_argument("--chunk", type=int, default=8, help="images of one frame size rendered together")
    ap.add_argument("--lr", type=float, default=8e-4)
    ap.add_argument("--wd", type=float, default=0.05)
    ap.add_argument("--warmup", type=int, default=150)
    ap.add_argument("--tp-frac", type=float, default=0.35, help="share of chunks in TestPatternSource's own style")
    ap.add_argument("--smoke", action="store_true", help="20 steps and a small evaluation")
    args = ap.parse_args()
    if args.smoke:
        args.max_steps = args.max_steps or 20
        args.minutes = min(args.minutes, 1.0)

    t_start = time.time()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log_lines = []

    def log(msg):
        line = f"[{time.time() - t_start:7.1f}s] {msg}"
        print(line, flush=True)
        log_lines.append(line)

    def flush_log():
        (out / "train_log.txt").write_text("\n".join(log_lines) + "\n")

    device = torch.device("cuda")
    torch.manual_seed(TRAIN_SEED)
    sam = build_sam(CONFIG).to(device)
    with torch.no_grad():
        torch.nn.init.trunc_normal_(sam.image_encoder.pos_embed, std=0.02)
    size = CONFIG["img_size"]
    counts = {part: sum(p.numel() for p in getattr(sam, part).parameters())
              for part in ("image_encoder", "prompt_encoder", "mask_decoder")}
    n_tensor_elems = sum(v.numel() for v in sam.state_dict().values())
    log(f"torch {torch.__version__} on {torch.cuda.get_device_name()}; config {json.dumps(CONFIG)}")
    log(f"args {json.dumps(vars(args))}")
    log(f"parameters {json.dumps(counts)}; state_dict elements {n_tensor_elems} "
        f"(~{2 * n_tensor_elems / 1e6:.2f} MB as fp16); encoder {encoder_gflops(CONFIG):.2f} GFLOP per frame")
    if 2 * n_tensor_elems > MAX_CHECKPOINT_BYTES - 200_000:
        raise SystemExit("the configuration would not fit in 10 MB as fp16")
    log(f"decode() vs MaskDecoder.forward: max diff {check_decode_matches_reference(sam, device):.2e}")

    opt = torch.optim.AdamW(param_groups(sam, args.wd), lr=args.lr, betas=(0.9, 0.999), fused=True)
    gen = SceneGenerator(TRAIN_SEED, device)
    budget = args.minutes * 60
    sam.train()
    step, t0 = 0, time.time()
    window = {}
    curve = []
    last_log = t0
    while True:
        elapsed = time.time() - t0
        if elapsed >= budget or (args.max_steps and step >= args.max_steps):
            break
        frac = min(elapsed / budget, 1.0)
        lr = args.lr * min(1.0, (step + 1) / args.warmup) * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * frac)))
        for g in opt.param_groups:
            g["lr"] = lr
        batch = make_batch(gen, sam, args.batch, args.chunk, size, args.tp_frac)
        multi_mode = "points" if gen.py.random() < 0.5 else "box+point"
        total, res = train_step(sam, gen, batch, size, multi_mode, gen.py.choice((2, 3)))
        opt.zero_grad(set_to_none=True)
        total.backward()
        torch.nn.utils.clip_grad_norm_(sam.parameters(), 1.0)
        opt.step()
        for k, v in res.items():
            window[k] = window.get(k, 0.0) + v.detach()
        window["n"] = window.get("n", 0) + 1
        step += 1
        if step % 50 == 0 or step == args.max_steps or time.time() - last_log > 30:
            n = window.pop("n")
            avg = {k: round(float(v) / n, 4) for k, v in window.items()}
            window = {}
            now = time.time() - t0
            curve.append(dict(step=step, t=round(now, 1), lr=round(lr, 6), **avg))
            log(f"step {step} t {now:.0f}s lr {lr:.2e} {json.dumps(avg)} "
                f"({step * args.batch / max(now, 1e-6):.0f} img/s, {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB)")
            last_log = time.time()
            if not math.isfinite(avg["loss"]):
                raise SystemExit("loss is not finite")
    torch.cuda.synchronize()
    train_s = time.time() - t0
    log(f"trained {step} steps, {step * args.batch} images, in {train_s:.0f}s")

    ckpt = out / "sam-demo-synthetic.pth"
    sd16 = fp16_state_dict(sam)
    torch.save(sd16, ckpt)
    ckpt_bytes = os.path.getsize(ckpt)
    log(f"saved {ckpt} ({ckpt_bytes} bytes, {len(sd16)} tensors, fp16)")
    flush_log()

    # Evaluate the saved fp16 checkpoint, loaded back into an fp32 model.
    ev = build_sam(CONFIG).to(device)
    ev.load_state_dict({k: v.float() for k, v in torch.load(ckpt, map_location=device).items()})
    eval_sets = [(n, s, z, 2 if args.smoke else c) for n, s, z, c in EVAL_SETS_FULL]
    report = evaluate(ev, device, eval_sets, overlay_dir=out, log=log)
    pred_check = predictor_check(ev, device, 2 if args.smoke else 8, log=log)

    summary = dict(config=CONFIG, steps=step, images=step * args.batch, train_seconds=round(train_s, 1),
                   batch=args.batch, peak_lr=args.lr, checkpoint_bytes=ckpt_bytes, parameters=counts,
                   encoder_gflops=round(encoder_gflops(CONFIG), 2), eval=report, predictor_box_miou=pred_check,
                   loss_curve=curve[:: max(1, len(curve) // 12)] + curve[-1:])
    log("summary " + json.dumps(summary))
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    if ckpt_bytes > MAX_CHECKPOINT_BYTES:
        log(f"WARNING: checkpoint is {ckpt_bytes} bytes, over {MAX_CHECKPOINT_BYTES}")
    flush_log()
    log(f"done in {time.time() - t_start:.0f}s")
    flush_log()


if __name__ == "__main__":
    main()
