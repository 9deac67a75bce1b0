#!/usr/bin/env python3
"""Trains samstream's demo SAM 2.1 (examples/sam2-demo-synthetic.pt) on generated clips, as SAM 2 trains video.

The model is Meta's own `sam2` classes (SAM2Base through SAM2VideoPredictor) at a tiny configuration, built by
tools/sam2_fixtures/make_sam2_fixtures.py's `build_model` (no hydra). Data: clips of T frames made with
tools/demo_model/scenes.py (shapes over textured backgrounds, TestPatternSource's look), the shapes moving,
bouncing off the frame's edges or leaving it, touching and covering each other; in some clips a larger shape
is steered over a smaller one so that it is hidden for a stretch.

One training step, per clip and object: frame 0 prompted (a box mostly, else 1-3 foreground points), every
later frame tracked from memory by SAM2Base.track_step with gradients flowing through the memory bank; per
frame the loss of Meta's MultiStepMultiMasksAndIous: 20 x focal + dice on the mask (the best of the
multimask outputs), MSE of the predicted IoU, BCE of the object score (an object whose visible mask is empty,
covered or out of the frame, is "absent"; mask and IoU losses count for present objects only). bf16
autocast, AdamW, cosine schedule over a wall-clock budget.

Usage (Meta's sam2 package on PYTHONPATH; torch with CUDA for the real run):
  PYTHONPATH=path/to/sam2-checkout python3 tools/sam2_demo_model/train_sam2_demo_model.py --minutes 7.5 --out OUT
  --smoke: a few steps on the CPU at a tiny batch, a small evaluation: every code path once.
Writes OUT/sam2-demo-synthetic.pt (+ .layout.json), OUT/train_log.txt, OUT/summary.json.
"""
import argparse
import importlib.util
import json
import math
import os
import sys
import time
import types
from pathlib import Path

import torch
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "sam2_fixtures"))
sys.path.insert(0, str(HERE.parent / "demo_model"))
import make_sam2_fixtures as fixtures  # noqa: E402
from scenes import MAX_SHAPES, SceneGenerator  # noqa: E402

# Input 256 (the Java CPU reference runs the demo's 4 objects at about 0.6 s a frame on 2 cores), Hiera 32 wide,
# stages [1, 2, 6, 1] (maps 64 / 32 / 16 / 8; windows 8, 4, 8, 8; blocks 5 and 8 global), hidden 128, memory 64
# (two tokens per object pointer), 2 memory-attention layers with 1 head, decoder MLP 512, IoU head 128.
CONFIG = dict(image_size=256, embed_dim=32, heads=1, stages=(1, 2, 6, 1), global_att=(5, 8),
              window_spec=(8, 4, 8, 8), bkg=(7, 7), hidden=128, mem_dim=64, mem_layers=2, mem_ffn=512,
              mem_heads=1, dec_mlp=512, iou_hidden=128)
# What the shapes do not tell samstream's loader (ModelCheckpoints reads <checkpoint>.layout.json).
LAYOUT = dict(name="demo_synthetic", heads=CONFIG["heads"], global_att_blocks=list(CONFIG["global_att"]),
              window_spec=list(CONFIG["window_spec"]), image_size=CONFIG["image_size"],
              mem_attn_heads=CONFIG["mem_heads"])
NAME = "sam2-demo-synthetic.pt"
MAX_CHECKPOINT_BYTES = 10 * 1000 * 1000
MEAN = torch.tensor(fixtures.MEAN).view(1, 3, 1, 1)
STD = torch.tensor(fixtures.STD).view(1, 3, 1, 1)
MIN_AREA = 30  # pixels of the 256 x 256 input on the prompted frame
TRAIN_SEED = 20261202
EVAL_SEED = 777_000_222
# (width, height), weight: the demo's and the benchmark's 320x240 most often.
TRAIN_SIZES = (((320, 240), 6), ((640, 480), 1), ((400, 300), 1), ((240, 320), 1), ((512, 512), 1), ((480, 270), 1))


def stub_missing(*names):
    """sam2.utils.misc imports tqdm and PIL, which nothing here uses: stub them where they are missing."""
    for n in names:
        if importlib.util.find_spec(n) is None:
            m = types.ModuleType(n)
            m.tqdm = m.Image = None
            sys.modules[n] = m
            if n == "PIL":
                sys.modules["PIL.Image"] = m


def bounce(p, lo, hi):
    """TestPatternSource's bounce: position p reflected into [lo, hi]."""
    span = (hi - lo).clamp(min=1e-3)
    q = torch.remainder(p - lo, 2 * span)
    return lo + torch.where(q > span, 2 * span - q, q)


# Presence events of the training clips (--events) and of the "events" evaluation set: an occluder in more
# clips, also partial or crossing, staying up to half the clip or to its end; a shape that leaves the frame
# by its nearest edge, stays out, and comes back (or not).
EVENTS = dict(occlude=0.6, partial=0.3, cross=0.5, stay=0.15, leave=0.4, leave_stay=0.15)


class ClipGenerator(SceneGenerator):
    """scenes.py's scenes held still over clips of `frames` frames, then set moving.

    Every random draw whose leading size is the frame count is drawn once per clip and repeated over its frames
    (background, colours, sizes, photometric changes); `_shapes` then moves the shapes: velocities up to 6% of
    the short side per frame, bouncing off the edges (always for TestPatternSource's style, 60% for the mixed
    one, else they may leave the frame), turning ones keep turning; in 40% of clips the last shape drawn (on
    top) becomes a disc wider than another one, comes over it, stays 0-3 frames and leaves: an occlusion.
    With `events` (EVENTS' shares) the clips get more of the frames where an object is absent (see EVENTS);
    without, the draws are those of the committed checkpoint's run. `focus` [clips, K] holds the slots an
    event happens to (covered, leaving), -1 where none."""

    def __init__(self, seed, device, frames, events=None):
        super().__init__(seed, device)
        self.frames = frames
        self.events = events
        self.n = -1

    def _held(self, draw, shape):
        if self.n > 0 and shape and shape[0] == self.n:
            return draw(self.n // self.frames, *shape[1:]).repeat_interleave(self.frames, 0)
        return draw(*shape)

    def rand(self, *shape):
        return self._held(lambda *s: SceneGenerator.rand(self, *s), shape)

    def normal(self, *shape):
        return self._held(lambda *s: SceneGenerator.normal(self, *s), shape)

    def randint(self, lo, hi, *shape):
        return self._held(lambda *s: SceneGenerator.randint(self, lo, hi, *s), shape)

    def clips(self, n_clips, width, height, style):
        self.n = n_clips * self.frames
        try:
            return self.render(self.n, width, height, style)
        finally:
            self.n = -1

    def _per_clip(self, n, B, T, draw="rand"):
        return getattr(self, draw)(n).view(B, T)[:, 0]

    def _shapes(self, n, H, W, tp):
        s = super()._shapes(n, H, W, tp)
        B, T, M, d = n // self.frames, self.frames, MAX_SHAPES, self.device
        ev = self.events
        side = min(W, H)
        t = torch.arange(T, device=d, dtype=torch.float32).view(1, T, 1)
        speed = self.uniform(0, 0.06 * side, n, M).view(B, T, M)
        ang = self.uniform(0, 2 * math.pi, n, M).view(B, T, M)
        vx, vy = speed * torch.cos(ang), speed * torch.sin(ang)
        cx0, cy0, r = s["cx"].view(B, T, M), s["cy"].view(B, T, M), s["r"].view(B, T, M).clone()
        sx, sy = s["sx"].view(B, T, M), s["sy"].view(B, T, M)
        x, y = cx0 + vx * t, cy0 + vy * t
        keep_in = torch.ones(B, T, M, dtype=torch.bool, device=d) if tp else self.coin(0.6, n, M).view(B, T, M)
        x = torch.where(keep_in, bounce(x, r, W - r), x)
        y = torch.where(keep_in, bounce(y, r, H - r), y)
        # the occluder: the top-most present shape, over a random earlier one
        count = s["present"].view(B, T, M)[:, 0].sum(1)  # present slots are 0 .. count-1
        top = (count - 1).clamp(min=0)
        under = (self._per_clip(n, B, T) * top.float()).long().clamp(max=M - 1)
        steer = (self._per_clip(n, B, T) < (ev["occlude"] if ev else 0.4)) & (count >= 2)
        tc = 1 + (self._per_clip(n, B, T) * max(T - 2, 1)).long()  # first frame covered
        # frames it stays on top (then leaves): 0-3, with events 0 .. T/2 or to the end
        hold = (self._per_clip(n, B, T) * (T // 2 + 1 if ev else 4)).long()
        bi = torch.arange(B, device=d)
        reach = r[bi, 0, under] * torch.maximum(sx[bi, 0, under], sy[bi, 0, under])
        # it comes from 2.8 reaches away (clear of the shape at frame 0), parks on it, leaves the way it came
        e = self.uniform(0, 2 * math.pi, n).view(B, T)[:, 0]
        after = torch.ones(B, device=d)  # +1: leaves the way it came, -1: goes on across
        grow = 1.6 * reach  # a disc that wide covers the hidden shape (its corners included)
        kind = torch.zeros(B, dtype=torch.long, device=d)
        if ev:
            hold = torch.where(self._per_clip(n, B, T) < ev["stay"], torch.full_like(hold, T), hold)
            after = torch.where(self._per_clip(n, B, T) < ev["cross"], -after, after)
            partial = self._per_clip(n, B, T) < ev["partial"]
            grow = torch.where(partial, reach * (0.7 + 0.5 * self._per_clip(n, B, T)), grow)
            # a disc or a square box (box_h 1) when it must cover; also a diamond when partial
            kind = torch.tensor([0, 1, 3], device=d)[(self._per_clip(n, B, T) * (2 + partial.float())).long()]
        rel_v = (2.8 * reach / tc.float()).view(B, 1)
        tt = t.view(1, T)
        dist = rel_v * ((tc.view(B, 1) - tt).clamp(min=0)
                        + after.view(B, 1) * (tt - tc.view(B, 1) - hold.view(B, 1)).clamp(min=0))
        occ_x = x[bi, :, under] + torch.cos(e).view(B, 1) * dist
        occ_y = y[bi, :, under] + torch.sin(e).view(B, 1) * dist
        sel = steer.view(B, 1)
        x[bi, :, top] = torch.where(sel, occ_x, x[bi, :, top])
        y[bi, :, top] = torch.where(sel, occ_y, y[bi, :, top])
        r[bi, :, top] = torch.where(sel, grow.view(B, 1).expand(B, T), r[bi, :, top])
        for key, value in (("kind", kind), ("sx", 1.0), ("sy", 1.0), ("box_h", 1.0 if ev else None)):
            if value is None:
                continue
            v = s[key].view(B, T, M)
            fill = value.view(B, 1).expand(B, T).to(v.dtype) if torch.is_tensor(value) else torch.full_like(v[bi, :, top], value)
            v[bi, :, top] = torch.where(sel, fill, v[bi, :, top])
        focus = [torch.where(steer, under, torch.full_like(under, -1))]
        if ev:
            focus.append(self._leaver(n, B, T, H, W, x, y, r, sx, sy, vx, vy, count, top, under, steer))
        self.focus = torch.stack(focus, 1)
        spin = self.uniform(-0.12, 0.12, n, M) * (s["theta"] != 0)
        s["theta"] = s["theta"] + spin * t.view(1, T, 1).expand(B, T, M).reshape(n, M)
        s["cx"], s["cy"], s["r"] = x.reshape(n, M), y.reshape(n, M), r.reshape(n, M)
        return s

    def _leaver(self, n, B, T, H, W, x, y, r, sx, sy, vx, vy, count, top, under, steer):
        """One shape a clip (not the occluder nor the covered one) leaves by its nearest edge from its frame-0
        place, fully out by frame te, stays out `hold` frames (or to the end), comes back the same way and stops
        where it started; it keeps its sideways drift. Moves x, y in place; returns the slot, -1 where none."""
        d, ev = self.device, self.events
        bi = torch.arange(B, device=d)
        slot = (self._per_clip(n, B, T) * count.float()).long().clamp(max=MAX_SHAPES - 1)
        leave = (self._per_clip(n, B, T) < ev["leave"]) & (count >= 1) & (slot != under) & ~(steer & (slot == top))
        te = 2 + (self._per_clip(n, B, T) * max(T - 4, 1)).long()
        hold = (self._per_clip(n, B, T) * (T // 2 + 1)).long()
        hold = torch.where(self._per_clip(n, B, T) < ev["leave_stay"], torch.full_like(hold, T), hold)
        px, py = x[bi, 0, slot], y[bi, 0, slot]
        gap = torch.stack([px, W - px, py, H - py], 1)  # to the left, right, top, bottom edge
        edge = gap.argmin(1)
        nx = torch.tensor([-1.0, 1.0, 0.0, 0.0], device=d)[edge]
        ny = torch.tensor([0.0, 0.0, -1.0, 1.0], device=d)[edge]
        # the corners of a turned, scaled box reach up to 1.5 r max(sx, sy) from the centre
        out = gap.gather(1, edge.view(B, 1))[:, 0].clamp(min=0) + 1.5 * r[bi, 0, slot] * torch.maximum(
            sx[bi, 0, slot], sy[bi, 0, slot]) + 2
        v = (out / te.float()).view(B, 1)
        tt = torch.arange(T, device=d, dtype=torch.float32).view(1, T)
        along = v * (torch.minimum(tt, te.view(B, 1).float())
                     - (tt - te.view(B, 1) - hold.view(B, 1)).clamp(min=0)).clamp(min=0)
        wx, wy = vx[bi, 0, slot], vy[bi, 0, slot]
        side_v = (wx * -ny + wy * nx).view(B, 1)  # the drift along the edge
        lx = px.view(B, 1) + nx.view(B, 1) * along - ny.view(B, 1) * side_v * tt
        ly = py.view(B, 1) + ny.view(B, 1) * along + nx.view(B, 1) * side_v * tt
        sel = leave.view(B, 1)
        x[bi, :, slot] = torch.where(sel, lx, x[bi, :, slot])
        y[bi, :, slot] = torch.where(sel, ly, y[bi, :, slot])
        return torch.where(leave, slot, torch.full_like(slot, -1))


def to_input(images_nhwc, size):
    """uint8 [n,H,W,3] -> normalized [n,3,S,S]: the frame resized to the square input (antialiased bilinear,
    rounded to 8 bits, as samstream's Pillow-style resize), then Meta's mean / std."""
    x = images_nhwc.permute(0, 3, 1, 2).float()
    x = F.interpolate(x, (size, size), mode="bilinear", align_corners=False, antialias=True).round().clamp(0, 255)
    return (x / 255.0 - MEAN.to(x.device)) / STD.to(x.device)


def to_input_masks(masks, size):
    return F.interpolate(masks.float(), (size, size), mode="bilinear", align_corners=False, antialias=True) > 0.5


def make_clips(gen, n_clips, chunk, size, sizes=TRAIN_SIZES, tp_frac=0.4):
    """n_clips clips: images [n_clips*T,3,S,S], visible masks [n_clips*T,M,S,S] at the input's size,
    full-resolution masks and frame sizes too (for evaluation)."""
    out = []
    for _ in range(max(1, n_clips // chunk)):
        (w, h) = gen.py.choices([s for s, _ in sizes], [wt for _, wt in sizes])[0]
        style = "testpattern" if gen.py.random() < tp_frac else "mixed"
        sc = gen.clips(chunk, w, h, style)
        out.append(dict(images=to_input(sc["images"], size), gt=to_input_masks(sc["visible"], size),
                        full=sc["visible"], style=style, hw=(h, w), focus=gen.focus))
    return out


def mask_box(m):
    """bool [N,H,W] -> float [N,4] (x0, y0, x1, y1) in pixel edges; zeros when empty."""
    h, w = m.shape[-2:]
    cols, rows = m.any(-2), m.any(-1)
    xs = torch.arange(w, device=m.device)
    ys = torch.arange(h, device=m.device)
    return torch.stack([torch.where(cols, xs, w).amin(-1), torch.where(rows, ys, h).amin(-1),
                        torch.where(cols, xs, -1).amax(-1) + 1, torch.where(rows, ys, -1).amax(-1) + 1], -1).float()


def random_points(gen, m, k):
    """k random pixel centres of each mask [N,H,W] -> [N,k,2]."""
    n, h, w = m.shape
    pts = []
    for _ in range(k):
        r = torch.where(m.flatten(1), gen.rand(n, h * w), torch.full((1,), -1.0, device=m.device))
        idx = r.argmax(1)
        pts.append(torch.stack([(idx % w).float() + 0.5, torch.div(idx, w, rounding_mode="floor").float() + 0.5], -1))
    return torch.stack(pts, 1)


def prompts(gen, gt0, kind, size):
    """Frame 0's prompt per object: a box (the visible mask's, each side moved by noise of 7% of its length,
    at most 8 px, and in a third of the cases loosened by up to 15%) as two corner points labelled 2 and 3,
    or k foreground points."""
    n = gt0.shape[0]
    if kind == "box":
        b = mask_box(gt0)
        wh = (b[:, 2:] - b[:, :2]).repeat(1, 2)
        noise = (gen.normal(n, 4) * 0.07 * wh).clamp(-8, 8)
        loose = gen.coin(0.33, n, 1) * gen.uniform(0, 0.15, n, 4) * wh * torch.tensor([-1, -1, 1, 1], device=b.device)
        b = (b + noise + loose).clamp(0, size)
        coords = b.view(n, 2, 2)
        labels = torch.tensor([2, 3], device=b.device).repeat(n, 1)
    else:
        k = int(kind)
        coords = random_points(gen, gt0, k)
        labels = torch.ones(n, k, dtype=torch.int32, device=gt0.device)
    return {"point_coords": coords.float(), "point_labels": labels.int()}


def frame_losses(high_multi, iou_pred, score, gt, absent_weight=1.0):
    """Meta's MultiStepMultiMasksAndIous for one frame: high_multi [N,K,S,S] logits, iou_pred [N,K], score [N,1],
    gt bool [N,S,S] -> (mask loss [N], iou loss [N], class loss [N], present [N], best IoU [N]). The object
    score's BCE counts absent_weight times on frames where the object is absent."""
    logits = high_multi.float()
    t = gt[:, None].float().expand_as(logits)
    p = torch.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(logits, t, reduction="none")
    p_t = p * t + (1 - p) * (1 - t)
    focal = ((0.25 * t + 0.75 * (1 - t)) * ce * (1 - p_t) ** 2).mean((-1, -2))
    dice = 1 - (2 * (p * t).sum((-1, -2)) + 1) / (p.sum((-1, -2)) + t.sum((-1, -2)) + 1)
    combined = 20 * focal + dice
    with torch.no_grad():
        pred = logits > 0
        g = gt[:, None]
        iou = (pred & g).sum((-1, -2)).float() / (pred | g).sum((-1, -2)).float().clamp(min=1)
    best = combined.argmin(1)
    rows = torch.arange(logits.shape[0], device=logits.device)
    present = gt.flatten(1).any(1).float()
    mask_loss = combined[rows, best]
    iou_loss = ((iou_pred.float() - iou) ** 2).mean(1)
    cls_loss = F.binary_cross_entropy_with_logits(score.float().view(-1), present, reduction="none")
    cls_loss = cls_loss * (present + absent_weight * (1 - present))
    return mask_loss, iou_loss, cls_loss, present, iou[rows, best]


def track_clip(model, clip, obj_clip, obj_slot, kind, gen, frames, train=True, absent_weight=1.0):
    """Prompts each object on frame 0 and tracks it through the clip with SAM2Base.track_step.
    Returns per-frame outputs (high-res masks [N,S,S], object scores [N]) and the summed losses."""
    S = CONFIG["image_size"]
    backbone = model.forward_image(clip["images"])
    _, feats, pos, feat_sizes = model._prepare_backbone_features(backbone)
    gt = clip["gt"][obj_clip[:, None] * frames + torch.arange(frames, device=obj_clip.device), obj_slot[:, None]]
    point_inputs = prompts(gen, gt[:, 0], kind, S)
    output_dict = {"cond_frame_outputs": {}, "non_cond_frame_outputs": {}}
    total = dict(mask=0.0, iou=0.0, cls=0.0, present=0.0, best_iou=0.0, absent_found=0.0)
    masks, scores = [], []
    for t in range(frames):
        idx = obj_clip * frames + t
        out = model.track_step(frame_idx=t, is_init_cond_frame=t == 0,
                               current_vision_feats=[f[:, idx] for f in feats],
                               current_vision_pos_embeds=[p[:, idx] for p in pos], feat_sizes=feat_sizes,
                               point_inputs=point_inputs if t == 0 else None, mask_inputs=None,
                               output_dict=output_dict, num_frames=frames if train else 10 ** 9)
        output_dict["cond_frame_outputs" if t == 0 else "non_cond_frame_outputs"][t] = out
        _, high_multi, iou_pred, _, high, _, score = out["train_outputs"]
        masks.append(out["pred_masks_high_res"][:, 0])
        scores.append(score.view(-1))
        if train:
            m, i, c, present, best = frame_losses(high_multi, iou_pred, score, gt[:, t], absent_weight)
            total["mask"] = total["mask"] + (m * present).sum()
            total["iou"] = total["iou"] + (i * present).sum()
            total["cls"] = total["cls"] + c.sum()
            total["present"] += present.sum().item()
            total["best_iou"] += (best * present).sum().item()
            total["absent_found"] += ((score.view(-1) <= 0) & (present == 0)).sum().item()
        if not train:
            out.pop("train_outputs")
    return masks, scores, gt, total


def pick_objects(gen, gt, focus, frames, per_clip):
    """Up to per_clip objects a clip, among those with at least MIN_AREA pixels on frame 0, those an event
    happens to (focus [n_clips, K]: the covered one, the leaving one; -1: none) first: (clip, slot) [N]."""
    n_clips = gt.shape[0] // frames
    area0 = gt[::frames].flatten(2).sum(-1)  # [n_clips, M]
    r = gen.rand(n_clips, MAX_SHAPES)
    for k in range(focus.shape[1]):
        r = r + F.one_hot(focus[:, k].clamp(min=0), MAX_SHAPES) * (focus[:, k] >= 0).view(-1, 1)
    r = torch.where(area0 >= MIN_AREA, r, torch.full_like(r, -1.0))
    val, slot = r.topk(min(per_clip, MAX_SHAPES), dim=1)
    clip = torch.arange(n_clips, device=gt.device).view(-1, 1).expand_as(slot)
    ok = val >= 0
    return clip[ok], slot[ok]


def make_model(device):
    from sam2.sam2_video_predictor import SAM2VideoPredictor

    class Trainee(SAM2VideoPredictor):
        """Keeps _track_step's SAM outputs in the frame's output (track_step drops the multimasks and, when
        training, the object score), as Meta's SAM2Train does."""

        def _track_step(self, *args, **kwargs):
            current_out, sam_outputs, high_res, pix = super()._track_step(*args, **kwargs)
            current_out["train_outputs"] = sam_outputs
            return current_out, sam_outputs, high_res, pix

    return fixtures.build_model(CONFIG, base=Trainee).to(device)


def param_groups(model, wd):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if p.ndim < 2 or "pos_embed" in name or "embed" in name.split(".")[-1] or "tpos" in name or "token" in name:
            no_decay.append(p)
        else:
            decay.append(p)
    return [dict(params=decay, weight_decay=wd), dict(params=no_decay, weight_decay=0.0)]


def fp16_state_dict(model):
    return {k: v.detach().to(torch.float16).cpu().contiguous() for k, v in model.state_dict().items()}


EVAL_SETS = [
    # name, style (tp fraction), sizes, clips, frames, events
    ("testpattern-320x240", 1.0, (((320, 240), 1),), 48, 16, None),
    ("mixed", 0.0, TRAIN_SIZES, 48, 16, None),
    # objects covered for longer, leaving and coming back (EVENTS), over 20 frames (7 memories)
    ("events-320x240", 0.5, (((320, 240), 1),), 48, 20, EVENTS),
]


@torch.no_grad()
def evaluate(model, device, sets, chunk, log):
    """Held-out clips, tracked as a stream (eval mode, num_frames unknown): box on frame 0 (no noise beyond the
    prompt's), masks at the frame's resolution. J = mean IoU over the frames where the object is visible
    (after frame 0), presence accuracy over all frames after frame 0, absent recall over frames it is not,
    present recall over frames it is; J_return: the mean IoU over the frames where it is visible again after
    an absent frame."""
    model.eval()
    results = {}
    for name, tp, sizes, n_clips, frames, events in sets:
        gen = ClipGenerator(EVAL_SEED, device, frames, events)
        j, j0, n_present, correct, n_frames, absent_ok, n_absent = 0.0, 0.0, 0, 0, 0, 0, 0
        present_ok, j_ret, n_ret = 0, 0.0, 0
        for clip in make_clips(gen, n_clips, chunk, CONFIG["image_size"], sizes, tp):
            obj_clip, obj_slot = pick_objects(gen, clip["gt"], clip["focus"], frames, MAX_SHAPES)
            if obj_clip.numel() == 0:
                continue
            masks, scores, _, _ = track_clip(model, clip, obj_clip, obj_slot, "box", gen, frames, train=False)
            h, w = clip["hw"]
            was_absent = torch.zeros(obj_clip.numel(), dtype=torch.bool, device=obj_clip.device)
            for t in range(frames):
                pred = F.interpolate(masks[t][:, None].float(), (h, w), mode="bilinear", align_corners=False)[:, 0] > 0
                g = clip["full"][obj_clip * frames + t, obj_slot]
                present = g.flatten(1).any(1)
                iou = (pred & g).flatten(1).sum(1).float() / (pred | g).flatten(1).sum(1).float().clamp(min=1)
                visible = scores[t] > 0
                if t == 0:
                    j0 += iou.sum().item()
                    continue
                j += iou[present].sum().item()
                n_present += int(present.sum())
                correct += int((visible == present).sum())
                n_frames += present.numel()
                absent_ok += int((~visible & ~present).sum())
                n_absent += int((~present).sum())
                present_ok += int((visible & present).sum())
                back = present & was_absent
                j_ret += iou[back].sum().item()
                n_ret += int(back.sum())
                was_absent |= ~present
        objects = n_frames // max(frames - 1, 1)
        results[name] = dict(objects=objects, frames=frames, J_frame0=round(j0 / max(objects, 1), 4),
                             J_tracked=round(j / max(n_present, 1), 4),
                             presence_accuracy=round(correct / max(n_frames, 1), 4),
                             absent_frames=n_absent, absent_recall=round(absent_ok / max(n_absent, 1), 4),
                             present_recall=round(present_ok / max(n_present, 1), 4),
                             return_frames=n_ret, J_return=round(j_ret / max(n_ret, 1), 4))
        log(f"eval {name}: {results[name]}")
    model.train()
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--minutes", type=float, default=7.5, help="wall-clock training budget")
    ap.add_argument("--clips", type=int, default=32, help="clips per step")
    ap.add_argument("--per-clip", type=int, default=2, help="objects tracked per clip")
    ap.add_argument("--frames", type=int, default=8, help="frames per training clip")
    ap.add_argument("--chunk", type=int, default=8, help="clips of one frame size rendered together")
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--wd", type=float, default=0.05)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--point-frac", type=float, default=0.3, help="share of steps prompted with points")
    ap.add_argument("--image-phase", type=float, default=0.0,
                    help="share of the budget spent first on prompted single frames (SAM-style image steps)")
    ap.add_argument("--image-mix", type=float, default=0.0, help="share of image steps after that phase")
    ap.add_argument("--image-objects", type=int, default=4, help="objects prompted per frame in an image step")
    ap.add_argument("--events", action="store_true",
                    help="training clips with more absent frames (EVENTS: longer, partial, crossing occlusions; "
                         "shapes leaving the frame and coming back)")
    ap.add_argument("--absent-weight", type=float, default=1.0,
                    help="weight of the object score's BCE on frames where the object is absent")
    ap.add_argument("--init", help="fine-tune from this checkpoint (fp16 {'model': state_dict}, as saved here)")
    ap.add_argument("--eval-init", action="store_true", help="evaluate the --init checkpoint first, as is")
    ap.add_argument("--smoke", action="store_true", help="a few CPU-sized steps and a small evaluation")
    ap.add_argument("--amp", action="store_true", help="bf16 autocast on the CPU too (it is always on with CUDA)")
    a = ap.parse_args()
    fixtures.install_stubs()
    stub_missing("tqdm", "PIL")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    amp = device.type == "cuda" or a.amp
    if a.smoke:
        a.clips, a.chunk, a.frames, a.minutes = 2, 2, 4, min(a.minutes, 0.5)
    torch.manual_seed(TRAIN_SEED)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    os.makedirs(a.out, exist_ok=True)
    log_file = open(os.path.join(a.out, "train_log.txt"), "w")

    def log(msg):
        print(msg, flush=True)
        log_file.write(msg + "\n")
        log_file.flush()

    model = make_model(device).train()
    n_params = sum(p.numel() for p in model.parameters())
    log(f"torch {torch.__version__}, device {torch.cuda.get_device_name() if device.type == 'cuda' else 'cpu'}, config {CONFIG}, "
        f"{n_params} parameters, args {vars(a)}")
    sets = [(n, tp, sz, 4, 6, ev) for n, tp, sz, _, _, ev in EVAL_SETS] if a.smoke else EVAL_SETS
    init_results = None
    if a.init:
        sd0 = torch.load(a.init, map_location="cpu")["model"]
        model.load_state_dict({k: v.float() for k, v in sd0.items()})
        log(f"initialized from {a.init} ({len(sd0)} tensors)")
        if a.eval_init:
            init_results = evaluate(model, device, sets, 2 if a.smoke else a.chunk, lambda m: log("init " + m))
    opt = torch.optim.AdamW(param_groups(model, a.wd), lr=a.lr, betas=(0.9, 0.999))
    gen = ClipGenerator(TRAIN_SEED, device, a.frames, EVENTS if a.events else None)
    # Image steps: clips of one frame, every object prompted on it (what Meta's image pre-training gives SAM 2).
    image_gen = ClipGenerator(TRAIN_SEED + 1, device, 1)
    budget = a.minutes * 60
    start = time.time()
    step, frames_seen, hist = 0, 0, []
    while True:
        elapsed = time.time() - start
        if elapsed >= budget or (a.smoke and step >= 3):
            break
        lr = a.lr * min(1.0, (step + 1) / a.warmup) * 0.5 * (1 + math.cos(math.pi * min(1.0, elapsed / budget)))
        for g in opt.param_groups:
            g["lr"] = lr
        kind = "box" if gen.py.random() >= a.point_frac else str(gen.py.choice((1, 1, 2, 3)))
        image = elapsed < a.image_phase * budget or gen.py.random() < a.image_mix
        g_step, frames, per_clip = (image_gen, 1, a.image_objects) if image else (gen, a.frames, a.per_clip)
        # an image step renders as many frames as a clip step
        clips = make_clips(g_step, a.clips * a.frames // frames, a.chunk * a.frames // frames, CONFIG["image_size"])
        clip = {k: torch.cat([c[k] for c in clips]) for k in ("images", "gt", "focus")}
        obj_clip, obj_slot = pick_objects(g_step, clip["gt"], clip["focus"], frames, per_clip)
        if obj_clip.numel() == 0:
            continue
        try:
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
                _, _, _, tot = track_clip(model, clip, obj_clip, obj_slot, kind, g_step, frames,
                                            absent_weight=a.absent_weight)
        except RuntimeError as e:
            if not amp or step > 0:
                raise
            amp = False  # e.g. torch 1.13's CPU autocast and LayerNorm: go on in fp32 rather than lose the run
            log(f"bf16 autocast failed on the first step ({str(e).splitlines()[0]}): training in fp32")
            continue
        n_obj_frames = obj_clip.numel() * frames
        loss = (tot["mask"] + tot["iou"] + tot["cls"]) / n_obj_frames
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        frames_seen += clip["images"].shape[0]
        hist.append([float(tot["mask"]) / n_obj_frames, float(tot["iou"]) / n_obj_frames,
                     float(tot["cls"]) / n_obj_frames, tot["best_iou"] / max(tot["present"], 1),
                     1 - tot["present"] / n_obj_frames,
                     tot["absent_found"], n_obj_frames - tot["present"]])
        if step % 25 == 0 or a.smoke:
            m = torch.tensor(hist[-25:]).mean(0).tolist()
            found = m[5] / max(m[6], 1e-9)  # of the absent object-frames, those scored absent
            log(f"step {step} t {time.time() - start:.0f}s lr {lr:.2e} loss mask {m[0]:.3f} iou {m[1]:.4f} "
                f"cls {m[2]:.4f} train IoU {m[3]:.3f} absent {m[4]:.3f} found {found:.3f} grad {float(gnorm):.2f} {'image' if image else 'clip'} "
                f"objects {obj_clip.numel()} frames {frames_seen}")
    train_s = time.time() - start
    log(f"trained {step} steps, {frames_seen} frames in {train_s:.0f} s"
        + (f", peak memory {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB" if device.type == "cuda" else ""))

    sd = fp16_state_dict(model)
    path = os.path.join(a.out, NAME)
    torch.save({"model": sd}, path)
    with open(path + ".layout.json", "w") as f:
        json.dump(LAYOUT, f)
    size = os.path.getsize(path)
    log(f"wrote {path}: {size} bytes, {len(sd)} tensors, {n_params} parameters")
    assert size <= MAX_CHECKPOINT_BYTES, f"{path} is {size} bytes, over {MAX_CHECKPOINT_BYTES}"

    # Evaluate what Java runs: the fp16 weights in fp32.
    model.load_state_dict({k: v.float() for k, v in sd.items()})
    model.float()
    results = evaluate(model, device, sets, 2 if a.smoke else a.chunk, log)
    summary = dict(config=CONFIG, layout=LAYOUT, parameters=n_params, checkpoint_bytes=size, steps=step,
                   frames=frames_seen, train_seconds=round(train_s), torch=torch.__version__,
                   device=torch.cuda.get_device_name() if device.type == "cuda" else "cpu", args=vars(a), eval=results,
                   eval_init=init_results,
                   last_losses=torch.tensor(hist[-50:]).mean(0).tolist()[:5] if hist else None,
                   date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    log(f"summary: {json.dumps(results)}")


if __name__ == "__main__":
    main()
