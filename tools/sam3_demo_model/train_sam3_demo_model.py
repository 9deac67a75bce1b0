#!/usr/bin/env python3
"""Trains samstream's demo SAM 3 (sam3-demo-synthetic.pt) on generated scenes: concept detection and tracking.

The model is Meta's own `sam3` classes at a small configuration (CONFIG, TRACKER below): the detector
(Sam3ImageOnVideoMultiGPU: ViT + dual neck, text encoder over samstream's test vocabulary of shape and colour
words, fusion encoder, DETR decoder with presence token, mask head) built by tools/sam3_fixtures/make_sam3_fixtures.py's
`build_model`, and the tracker (Sam3TrackerPredictor, SAM 2's memory design) built by
make_sam3_video_fixtures.py's `build_tracker`. Data: tools/demo_model/scenes.py's scenes (shapes over textured
backgrounds), always in the palette's six colours so that colour words mean something; clips move them as
tools/sam2_demo_model's ClipGenerator does (occlusions, shapes leaving the frame and coming back).

One training step:
  detection: B images, 2 phrases each ("red circle", "square", "blue", "a green triangle", ...; about a quarter
    name nothing there: presence negatives); every (image, phrase) pair is one query of forward_grounding. Loss as
    SAM 3 trains it (sam3/train/loss, matcher.py; our own compact code): Hungarian matching of the queries to the
    phrase's instances on each decoder layer (focal class cost 2, L1 5, GIoU 2), IoU-aware BCE on the scores
    (positives 10x, negatives weighted by p^2; none when the phrase has no instance) x 20, presence BCE x 20,
    L1 x 5 + GIoU x 2 on matched boxes, mask focal x 200 + dice x 10 on matched masks (last layer);
  tracking (after --track-from of the budget): C clips of T frames, up to 2 objects a clip given as a mask on
    frame 0 (as the video model starts a track from a detection), tracked by track_step with gradients through
    the memory; per frame SAM 2's loss (20 x focal + dice of the best of 3 masks, IoU MSE, object-score BCE,
    --absent-weight times on frames where the object is hidden or gone).
Both share one ViT pass. bf16 autocast, AdamW, warm-up then cosine over a wall-clock budget (--minutes).

--track-only (with --init): the detector frozen (ViT, text, detection neck, fusion, decoder, heads); only the
  tracker and the tracker's neck (the ViT's sam2_convs) learn, from tracking clips alone. Both losses share one
  gradient clip, so in a joint step the detection loss (about 25 against the tracker's 1) sets the clipped
  gradient's size and the tracker barely moves: the second joint run's tracking IoU stayed at 0.37 for 500 steps.
  --image-mix P: that share of its steps are prompt steps: single frames, each object prompted by a box or 1-3
  points (the SAM 2 demo's prompts) on a conditioning frame, SAM 2's loss on the decoder's masks. A track started
  from a mask never trains the decoder on its first frame; the SAM 2 demo's first run, without such steps, did not
  follow its prompts either (IoU 0.22; 0.90 with them).

Usage (Meta's sam3 on --sam3, e.g. .ref/sam3_src staged by tools/sam3_fixtures/stage_meta_sam3.sh):
  python3 tools/sam3_demo_model/train_sam3_demo_model.py --sam3 .ref/sam3_src --minutes 6.5 --out OUT
  --smoke: a few steps on the CPU at a tiny batch and a small evaluation: every code path once.
Writes OUT/sam3-demo-synthetic.pt ({"model": fp16 state_dict}, "detector." / "tracker." keys as sam3.pt),
OUT/train_log.txt, OUT/summary.json.
"""
import argparse
import importlib
import json
import math
import os
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "sam3_fixtures"))
sys.path.insert(0, str(HERE.parent / "sam2_demo_model"))
import make_sam3_fixtures as image_fixtures  # noqa: E402  (our own: stubs, Meta's import, the detector)
import make_sam3_video_fixtures as video_fixtures  # noqa: E402  (our own: the tracker)
import train_sam2_demo_model as sam2_demo  # noqa: E402  (our own: moving clips, SAM 2's per-frame loss)
from scenes import MAX_SHAPES, PALETTE, SceneGenerator  # noqa: E402
from detection_loss import detection_loss  # noqa: E402  (our own: SAM 3's detection loss, compact)

# Input 224 (grid 16, masks 64 x 64), ViT 96 x 6 (2 heads of 48, windows 8, global blocks 2 and 5, position
# table 8 x 8 tiled twice), detector 64 wide (4 heads, 3 + 3 layers, 32 queries), text 64 x 2 (one head) over the
# test vocabulary (814 ids). Java reads all of it from the shapes (Sam3ConfigInference).
CONFIG = dict(image_fixtures.CONFIGS["tiny"], image_size=224, pretrain_size=112, embed=96, depth=6, heads=2,
              window=8, global_att=(2, 5), d=64, det_heads=4, enc_layers=3, enc_ffn=256, dec_layers=3, dec_ffn=256,
              queries=32, geo_layers=1, geo_ffn=128, scoring_hidden=256, text_width=64, text_heads=1, text_layers=2)
# The tracker is as wide as the detector (its neck feeds it); memory 16 wide, 7 memories, 2 attention layers.
TRACKER = dict(hidden=64, mem_dim=16, num_maskmem=7, mem_layers=2, mem_ffn=256)
NAME = "sam3-demo-synthetic.pt"
MAX_CHECKPOINT_BYTES = 20 * 1000 * 1000
TRAIN_SEED = 20261205
EVAL_SEED = 777_000_333
MIN_PIXELS = 12  # visible pixels at the input's size for a shape to count as an instance
# Words for scenes.py's kinds (disc, box, triangle, diamond) and palette colours (in PALETTE's order); a phrase
# picks one word of a tuple, so synonyms name the same instances. All are in the test vocabulary.
KIND_WORDS = (("circle", "disc"), ("square", "rectangle", "box"), ("triangle",), ("diamond",))
COLOUR_WORDS = (("red",), ("green",), ("blue",), ("yellow",), ("magenta", "pink"), ("cyan",))
# Frame sizes of the scenes, (width, height), weight: the demo's 320x240 most often.
SIZES = (((320, 240), 5), ((640, 480), 1), ((400, 300), 1), ((240, 320), 1), ((512, 512), 1), ((480, 270), 1))


def scalar(x):
    """A loss sum as a float (a tensor, or 0.0 when nothing was summed)."""
    return x.detach().item() if torch.is_tensor(x) else float(x)


def log_to(path):
    f = open(path, "w")

    def log(msg):
        print(msg, flush=True)
        f.write(msg + "\n")
        f.flush()
    return log


def ensure_torchvision():
    """Meta's modules import torchvision. Where its C ops do not load beside this torch (a CPU-only developer
    machine: "operator torchvision::nms does not exist"), define the two op schemas its import registers fake
    kernels for, so its Python parts import; nothing here calls them. The GPU machine's torchvision is whole."""
    try:
        import torchvision  # noqa: F401
        return "torchvision"
    except RuntimeError as e:
        if "torchvision::" not in str(e):
            raise
    for k in [k for k in sys.modules if k == "torchvision" or k.startswith("torchvision.")]:
        del sys.modules[k]
    lib = torch.library.Library("torchvision", "DEF")
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    ensure_torchvision.lib = lib  # keep the definitions alive
    import torchvision  # noqa: F401,F811
    # its roi_align then runs a Python fallback that it wraps in torch.compile on first use (on the dummy prompt's
    # no boxes); Inductor cannot load beside the stubbed triton, so torch.compile is the identity here
    torch.compile = lambda fn=None, *args, **kwargs: fn if fn is not None else (lambda f: f)
    return "torchvision (Python parts only: its C ops are missing here; torch.compile off)"


# ---------------- scenes ----------------

class PaletteScenes(SceneGenerator):
    """scenes.py's scenes with every shape in a palette colour (+-20 per channel) so colour words have one
    meaning, and boxes and diamonds turned by little enough that "square" and "diamond" stay apart; `colour`
    [n, M] holds the last render's palette index per slot."""

    def _shapes(self, n, H, W, tp):
        s = super()._shapes(n, H, W, tp)
        if tp:  # TestPatternSource's own colours are the palette's: the nearest one is the colour
            self.colour = (self.palette.view(1, 1, -1, 3) - s["rgb"].unsqueeze(2)).abs().sum(-1).argmin(-1)
        else:
            self.colour = self.randint(0, len(PALETTE), n, MAX_SHAPES)
            s["rgb"] = (self.palette[self.colour] + self.uniform(-20, 20, n, MAX_SHAPES, 3)).clamp(0, 255)
            # a box turned by 45 degrees is a diamond and the other way round: keep those two within +-0.25 rad
            square_or_diamond = (s["kind"] == 1) | (s["kind"] == 3)
            s["theta"] = torch.where(square_or_diamond & (s["theta"] != 0), self.uniform(-0.25, 0.25, n, MAX_SHAPES),
                                     s["theta"])
        return s


class LookalikeScenes(PaletteScenes):
    """PaletteScenes where a `lookalike` share of the mixed-style scenes (of clips, under ClipGenerator: the draw is
    held over a clip's frames) gives every shape the first one's kind and palette colour (+-8 per channel): look-alike
    distractors, so that a tracker must follow its object by its memory and motion rather than by how it looks. With
    `lookalike` 0 no number is drawn, so the draws are those of the runs before it."""

    lookalike = 0.0

    def _shapes(self, n, H, W, tp):
        s = super()._shapes(n, H, W, tp)
        if self.lookalike <= 0 or tp:
            return s
        same = self.coin(self.lookalike, n).view(n, 1)
        s["kind"] = torch.where(same, s["kind"][:, :1].expand_as(s["kind"]), s["kind"])
        self.colour = torch.where(same, self.colour[:, :1].expand_as(self.colour), self.colour)
        near = (self.palette[self.colour] + self.uniform(-8, 8, n, MAX_SHAPES, 3)).clamp(0, 255)
        s["rgb"] = torch.where(same.unsqueeze(-1), near, s["rgb"])
        # boxes and diamonds made so here keep PaletteScenes' rule: turned by +-0.25 rad at most
        square_or_diamond = (s["kind"] == 1) | (s["kind"] == 3)
        s["theta"] = torch.where(same & square_or_diamond & (s["theta"].abs() > 0.25),
                                 self.uniform(-0.25, 0.25, n, MAX_SHAPES), s["theta"])
        return s


class PaletteClips(sam2_demo.ClipGenerator, LookalikeScenes):
    """The SAM 2 demo's moving clips (ClipGenerator), in palette colours; `lookalike` the share of mixed-style clips
    whose shapes all look alike (LookalikeScenes), applied before ClipGenerator picks and moves the occluder."""

    def __init__(self, seed, device, frames, events=None, lookalike=0.0):
        super().__init__(seed, device, frames, events)
        self.lookalike = lookalike


MEAN, STD = 0.5, 0.5  # Sam3Processor's normalization


def to_input(images_nhwc, size):
    """uint8 [n,H,W,3] -> [n,3,S,S]: resized to the square input (antialiased bilinear, rounded to 8 bits, as
    samstream's resize), then Sam3Processor's (x / 255 - 0.5) / 0.5."""
    x = images_nhwc.permute(0, 3, 1, 2).float()
    x = F.interpolate(x, (size, size), mode="bilinear", align_corners=False, antialias=True).round().clamp(0, 255)
    return (x / 255.0 - MEAN) / STD


def masks_at(masks, size):
    """bool [n,M,H,W] -> float [n,M,size,size], the share of each output pixel covered."""
    return F.interpolate(masks.float(), (size, size), mode="area")


def render_scenes(gen, n, chunk, size, sizes=SIZES, tp_frac=0.35):
    """n scenes (chunks of one frame size and style): images [n,3,S,S], masks at S (bool [n,M,S,S]), kinds and
    palette colours [n,M], valid [n,M] (at least MIN_PIXELS visible at S)."""
    parts = []
    for _ in range(max(1, n // chunk)):
        (w, h) = gen.py.choices([s for s, _ in sizes], [wt for _, wt in sizes])[0]
        style = "testpattern" if gen.py.random() < tp_frac else "mixed"
        sc = gen.render(chunk, w, h, style)
        m = masks_at(sc["visible"], size) > 0.5
        parts.append(dict(images=to_input(sc["images"], size), masks=m, kind=sc["kind"], colour=gen.colour,
                          valid=sc["present"] & (m.flatten(2).sum(-1) >= MIN_PIXELS)))
    return {k: torch.cat([p[k] for p in parts]) for k in parts[0]}


def phrase_for(rng, kind, colour, use_colour, use_kind):
    words = []
    if use_colour:
        words.append(rng.choice(COLOUR_WORDS[colour]))
    if use_kind:
        words.append(rng.choice(KIND_WORDS[kind]))
    text = " ".join(words)
    r = rng.random()
    return ("a " + text) if r < 0.08 else ("the " + text) if r < 0.12 else text


def sample_phrases(rng, kind, colour, valid, per_image=2, negative=0.25):
    """Per image `per_image` phrases: mostly one naming a present shape (colour and shape 55%, shape 30%, colour
    15%), a `negative` share a random colour/shape pair (most name nothing there: presence negatives). Returns the
    phrases, their image index and their instances (bool [n_phrases, M])."""
    kind, colour, valid = kind.cpu(), colour.cpu(), valid.cpu()
    phrases, img_ids, targets = [], [], []
    for i in range(kind.shape[0]):
        present = valid[i].nonzero().flatten().tolist()
        for _ in range(per_image):
            if present and rng.random() >= negative:
                j = rng.choice(present)
                k, c = int(kind[i, j]), int(colour[i, j])
            else:
                k, c = rng.randrange(len(KIND_WORDS)), rng.randrange(len(COLOUR_WORDS))
            r = rng.random()
            use_colour, use_kind = (True, True) if r < 0.55 else (False, True) if r < 0.85 else (True, False)
            sel = valid[i].clone()
            if use_kind:
                sel &= kind[i] == k
            if use_colour:
                sel &= colour[i] == c
            phrases.append(phrase_for(rng, k, c, use_colour, use_kind))
            img_ids.append(i)
            targets.append(sel)
    return phrases, torch.tensor(img_ids), torch.stack(targets)


# ---------------- the model ----------------

class Sam3Demo(nn.Module):
    """The detector and the tracker under the names sam3.pt gives them ("detector.*", "tracker.*")."""

    def __init__(self, detector, tracker):
        super().__init__()
        self.detector = detector
        self.tracker = tracker


def build(sam3_root, device, log):
    m = image_fixtures.import_meta(sam3_root)
    for name in ["memory", "sam3_tracker_utils", "sam3_tracker_base", "sam3_tracking_predictor", "data_misc"]:
        importlib.import_module("sam3.model." + name)
    video_fixtures.TRACKER = TRACKER  # build_tracker reads its module's TRACKER
    detector = image_fixtures.build_model(m, CONFIG, image_fixtures.TEST_VOCAB, video=True)
    tracker = video_fixtures.build_tracker(m, torch, CONFIG, device)
    # Training: class scores and presence apart (the video model multiplies them at inference), no one-to-many
    # queries (DAC: its o2m half needs SAM 3's one-to-many matcher; inference never runs it), no matcher inside.
    detector.supervise_joint_box_scores = False
    detector.transformer.decoder.dac = False
    detector._compute_matching = lambda out, targets: None
    detector.back_convert = lambda targets: None
    # attributes of Meta's training tracker that the predictor lacks: memories as predicted, none dropped
    tracker.teacher_force_obj_scores_for_mem = False
    tracker.prob_to_dropout_spatial_mem = 0.0
    # keep what track_step's SAM heads give (the multimasks, IoUs, object score), as SAM2Train does
    heads = tracker._forward_sam_heads

    def recording_heads(*args, **kwargs):
        outs = heads(*args, **kwargs)
        tracker.last_sam_outputs = outs
        return outs

    tracker._forward_sam_heads = recording_heads
    # Meta's text encoder leaves these two as torch.empty (a checkpoint fills them): CLIP's initialization
    text = detector.backbone.language_backbone.encoder
    with torch.no_grad():
        nn.init.normal_(text.positional_embedding, std=0.01)
        nn.init.normal_(text.text_projection, std=text.text_projection.shape[0] ** -0.5)
        if getattr(detector.transformer.encoder, "level_embed", None) is not None:  # torch.Tensor(...), unset
            nn.init.normal_(detector.transformer.encoder.level_embed)
    model = Sam3Demo(detector, tracker).to(device)
    bad = [n for n, v in model.state_dict().items() if v.is_floating_point() and not torch.isfinite(v).all()]
    if bad:
        raise SystemExit("uninitialized tensors after building: %s" % bad)
    for mod in model.modules():  # RoPE tables that are plain attributes (made on "cuda" when it exists)
        if hasattr(mod, "freqs_cis") and isinstance(mod.freqs_cis, torch.Tensor) and \
                not any(mod.freqs_cis is b for b in mod.buffers(recurse=False)):
            mod.freqs_cis = mod.freqs_cis.to(device)
    find_stage = importlib.import_module("sam3.model.data_misc").FindStage
    return model, find_stage


def ground(model, FindStage, backbone, phrases, img_ids, device):
    """forward_grounding for one query per (image, phrase): img_ids index the backbone batch."""
    det = model.detector
    out = dict(backbone)
    out.update(det.backbone.forward_text(phrases, device=device))
    n = len(phrases)
    find = FindStage(img_ids=img_ids.to(device), text_ids=torch.arange(n, device=device), input_boxes=None,
                     input_boxes_mask=None, input_boxes_label=None, input_points=None, input_points_mask=None)
    return det.forward_grounding(backbone_out=out, find_input=find, find_target=None,
                                 geometric_prompt=det._get_dummy_prompt(num_prompts=n))


def tracker_features(tracker, backbone, idx):
    """The tracker's inputs for backbone batch rows idx, as Sam3TrackerBase.forward_image makes them from the
    second neck (sam2_backbone_out), without a second ViT pass."""
    sam2 = backbone["sam2_backbone_out"]
    fpn = [f[idx] for f in sam2["backbone_fpn"]]
    pos = [p[idx] for p in sam2["vision_pos_enc"]]
    fpn[0] = tracker.sam_mask_decoder.conv_s0(fpn[0])
    fpn[1] = tracker.sam_mask_decoder.conv_s1(fpn[1])
    _, feats, pos, sizes = tracker._prepare_backbone_features({"backbone_fpn": fpn, "vision_pos_enc": pos})
    return feats, pos, sizes


def track(tracker, feats, pos, sizes, first, gt, frames, train, absent_weight=1.0):
    """Objects [N] started from a mask on frame 0 (first [N,1,S,S] float) and tracked through `frames` frames;
    feats / pos hold [HW, N*frames, C] maps in (object, frame) order. Returns per-frame high-res masks and object
    scores (frames 1..), and SAM 2's summed losses against gt [N,frames,S,S] when training."""
    n = first.shape[0]
    output_dict = {"cond_frame_outputs": {}, "non_cond_frame_outputs": {}}
    total = dict(mask=0.0, iou=0.0, cls=0.0, present=0.0, best_iou=0.0)
    masks, scores = [], []
    for t in range(frames):
        idx = torch.arange(n, device=first.device) * frames + t
        out = tracker.track_step(frame_idx=t, is_init_cond_frame=t == 0,
                                 current_vision_feats=[f[:, idx] for f in feats],
                                 current_vision_pos_embeds=[p[:, idx] for p in pos], feat_sizes=sizes, image=None,
                                 point_inputs=None, mask_inputs=first if t == 0 else None, output_dict=output_dict,
                                 num_frames=frames if train else 10 ** 9)
        output_dict["cond_frame_outputs" if t == 0 else "non_cond_frame_outputs"][t] = out
        if t == 0:
            continue
        _, high_multi, ious, _, high, _, score = tracker.last_sam_outputs
        masks.append(high[:, 0])
        scores.append(score.view(-1))
        if train:
            mk, io, c, present, best = sam2_demo.frame_losses(high_multi, ious, score, gt[:, t], absent_weight)
            total["mask"] = total["mask"] + (mk * present).sum()
            total["iou"] = total["iou"] + (io * present).sum()
            total["cls"] = total["cls"] + c.sum()
            total["present"] += float(present.sum())
            total["best_iou"] += float((best * present).sum())
    return masks, scores, total


def prompt_step(tracker, feats, pos, sizes, gt0, gen):
    """Objects [N] on single frames (feats / pos hold [HW, N, C]), each prompted by a box or 1-3 points on a
    conditioning frame (no memory): SAM 2's losses of the decoder's masks against gt0 [N,S,S], summed."""
    kind = "box" if gen.py.random() < 0.5 else str(gen.py.choice((1, 1, 2, 3)))
    points = sam2_demo.prompts(gen, gt0, kind, CONFIG["image_size"])
    tracker.track_step(frame_idx=0, is_init_cond_frame=True, current_vision_feats=feats,
                       current_vision_pos_embeds=pos, feat_sizes=sizes, image=None, point_inputs=points,
                       mask_inputs=None, output_dict={"cond_frame_outputs": {}, "non_cond_frame_outputs": {}},
                       num_frames=1)
    _, high_multi, ious, _, _, _, score = tracker.last_sam_outputs
    mk, io, c, present, best = sam2_demo.frame_losses(high_multi, ious, score, gt0)
    return dict(mask=(mk * present).sum(), iou=(io * present).sum(), cls=c.sum(), present=float(present.sum()),
                best_iou=float((best * present).sum()))


def make_clips(gen, n_clips, chunk, size, sizes=SIZES, tp_frac=0.4):
    """Clips as the SAM 2 demo makes them, at this model's input: images [n*T,3,S,S], visible masks at S."""
    parts = []
    for _ in range(max(1, n_clips // chunk)):
        (w, h) = gen.py.choices([s for s, _ in sizes], [wt for _, wt in sizes])[0]
        style = "testpattern" if gen.py.random() < tp_frac else "mixed"
        sc = gen.clips(chunk, w, h, style)
        parts.append(dict(images=to_input(sc["images"], size), gt=masks_at(sc["visible"], size) > 0.5,
                          focus=gen.focus))
    return {k: torch.cat([p[k] for p in parts]) for k in parts[0]}


def param_groups(model, wd):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        last = name.split(".")[-1]
        if p.ndim < 2 or "pos_embed" in name or "embed" in last or "tpos" in name or "token" in name \
                or "query_embed" in name or "positional_embedding" in name:
            no_decay.append(p)
        else:
            decay.append(p)
    return [dict(params=decay, weight_decay=wd), dict(params=no_decay, weight_decay=0.0)]


def fp16_state_dict(model):
    """sam3.pt's form: floating tensors in fp16, the complex rotary tables as they are."""
    return {k: (v.detach().to(torch.float16) if v.is_floating_point() else v.detach()).cpu().contiguous()
            for k, v in model.state_dict().items()}


# ---------------- evaluation ----------------

@torch.no_grad()
def evaluate_detection(model, FindStage, device, n_images, chunk, tp_frac, log, name):
    """Held-out scenes, 2 phrases each (the training sampler, another seed), the processor's rule: a detection
    is a query with sigmoid(logit) x sigmoid(presence) > 0.5; detections matched to instances by mask IoU >= 0.5
    (greedy, best first). Reports presence accuracy, precision, recall, mean IoU of the matched masks, the share
    of phrases whose count is right, and the false detections on phrases with no instance."""
    gen = PaletteScenes(EVAL_SEED, device)
    S = CONFIG["image_size"]
    sc = render_scenes(gen, n_images, chunk, S, tp_frac=tp_frac)
    phrases, img_ids, targets = sample_phrases(gen.py, sc["kind"], sc["colour"], sc["valid"])
    tp = fp = fn = 0
    iou_sum, pres_ok, count_ok, neg, neg_fp = 0.0, 0, 0, 0, 0
    for s in range(0, len(phrases), 64):
        sl = slice(s, s + 64)
        ids = img_ids[sl]
        uniq, inv = torch.unique(ids, return_inverse=True)
        backbone = model.detector.backbone.forward_image(sc["images"][uniq.to(device)])
        out = ground(model, FindStage, backbone, phrases[sl], inv, device)
        score = out["pred_logits"][..., 0].float().sigmoid() * out["presence_logit_dec"].float().sigmoid()
        pm = F.interpolate(out["pred_masks"].float(), (S, S), mode="bilinear", align_corners=False) > 0
        for k in range(len(ids)):
            gt = sc["masks"][int(ids[k])][targets[s + k].to(device)]  # [T,S,S]
            keep = score[k] > 0.5
            pred = pm[k][keep]
            order = score[k][keep].argsort(descending=True)
            pred = pred[order]
            n_gt = gt.shape[0]
            pres_ok += int((out["presence_logit_dec"][k].float().item() > 0) == (n_gt > 0))
            count_ok += int(pred.shape[0] == n_gt)
            if n_gt == 0:
                neg += 1
                neg_fp += int(pred.shape[0] > 0)
            used = torch.zeros(n_gt, dtype=torch.bool, device=device)
            for p in pred:
                if n_gt:
                    inter = (p & gt).flatten(1).sum(1).float()
                    union = (p | gt).flatten(1).sum(1).float().clamp(min=1)
                    iou = torch.where(used, torch.full_like(inter, -1), inter / union)
                    j = int(iou.argmax())
                    if iou[j] >= 0.5:
                        used[j] = True
                        tp += 1
                        iou_sum += float(iou[j])
                        continue
                fp += 1
            fn += int((~used).sum())
    n = len(phrases)
    res = dict(images=n_images, phrases=n, instances=tp + fn, presence_accuracy=round(pres_ok / n, 4),
               precision=round(tp / max(tp + fp, 1), 4), recall=round(tp / max(tp + fn, 1), 4),
               mask_iou_matched=round(iou_sum / max(tp, 1), 4), count_accuracy=round(count_ok / n, 4),
               negative_phrases=neg, negatives_with_detections=neg_fp)
    log(f"eval detection {name}: {res}")
    return res


@torch.no_grad()
def evaluate_tracking(model, device, n_clips, frames, chunk, events, log, name, lookalike=0.0, tp_frac=0.5):
    """Held-out clips: each object given as its mask on frame 0 (as a detection starts a track), then tracked as a
    stream (eval mode). J: mean IoU over frames where the object is visible (after frame 0); presence accuracy,
    absent recall (absent frames scored absent), present recall; J_return over frames where it is visible again
    after an absent one. The same measures as the SAM 2 demo's."""
    tracker = model.tracker
    gen = PaletteClips(EVAL_SEED, device, frames, events, lookalike)
    S = CONFIG["image_size"]
    j = n_present = correct = n_frames = absent_ok = n_absent = present_ok = n_ret = 0
    j_ret = 0.0
    for _ in range(max(1, n_clips // chunk)):
        clip = make_clips(gen, chunk, chunk, S, tp_frac=tp_frac)
        obj_clip, obj_slot = sam2_demo.pick_objects(gen, clip["gt"], clip["focus"], frames, MAX_SHAPES)
        if obj_clip.numel() == 0:
            continue
        rows = (obj_clip[:, None] * frames + torch.arange(frames, device=device)).flatten()
        backbone = model.detector.backbone.forward_image(clip["images"][rows])
        feats, pos, sizes = tracker_features(tracker, backbone, torch.arange(rows.numel(), device=device))
        gt = clip["gt"][obj_clip[:, None] * frames + torch.arange(frames, device=device), obj_slot[:, None]]
        masks, scores, _ = track(tracker, feats, pos, sizes, gt[:, 0:1].float(), gt, frames, train=False)
        was_absent = torch.zeros(obj_clip.numel(), dtype=torch.bool, device=device)
        for t in range(1, frames):
            pred = masks[t - 1] > 0
            g = gt[:, t]
            present = g.flatten(1).any(1)
            iou = (pred & g).flatten(1).sum(1).float() / (pred | g).flatten(1).sum(1).float().clamp(min=1)
            visible = scores[t - 1] > 0
            j += float(iou[present].sum())
            n_present += int(present.sum())
            correct += int((visible == present).sum())
            n_frames += present.numel()
            absent_ok += int((~visible & ~present).sum())
            n_absent += int((~present).sum())
            present_ok += int((visible & present).sum())
            back = present & was_absent
            j_ret += float(iou[back].sum())
            n_ret += int(back.sum())
            was_absent |= ~present
    res = dict(objects=n_frames // max(frames - 1, 1), frames=frames, J_tracked=round(j / max(n_present, 1), 4),
               presence_accuracy=round(correct / max(n_frames, 1), 4), absent_frames=n_absent,
               absent_recall=round(absent_ok / max(n_absent, 1), 4),
               present_recall=round(present_ok / max(n_present, 1), 4), return_frames=n_ret,
               J_return=round(j_ret / max(n_ret, 1), 4))
    log(f"eval tracking {name}: {res}")
    return res


def evaluate(model, FindStage, device, smoke, log):
    model.eval()
    if smoke:
        det = {"mixed": evaluate_detection(model, FindStage, device, 4, 2, 0.35, log, "mixed")}
        trk = {"events": evaluate_tracking(model, device, 2, 5, 2, sam2_demo.EVENTS, log, "events"),
               "lookalike": evaluate_tracking(model, device, 2, 5, 2, None, log, "lookalike", 1.0, 0.0)}
    else:
        det = {"testpattern-320x240": evaluate_detection(model, FindStage, device, 256, 32, 1.0, log,
                                                         "testpattern"),
               "mixed": evaluate_detection(model, FindStage, device, 256, 32, 0.0, log, "mixed")}
        trk = {"clips": evaluate_tracking(model, device, 48, 16, 8, None, log, "clips"),
               "events": evaluate_tracking(model, device, 48, 16, 8, sam2_demo.EVENTS, log, "events"),
               # mixed-style clips whose shapes all look alike (the demo clip's failure: a second blob on another
               # shape)
               "lookalike": evaluate_tracking(model, device, 48, 16, 8, None, log, "lookalike", 1.0, 0.0)}
    model.train()
    return dict(detection=det, tracking=trk)


# ---------------- training ----------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sam3", required=True, help="folder holding Meta's sam3 package (.ref/sam3_src)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--minutes", type=float, default=6.5, help="wall-clock training budget")
    ap.add_argument("--images", type=int, default=48, help="detection images per step (2 phrases each)")
    ap.add_argument("--chunk", type=int, default=8, help="scenes of one frame size rendered together")
    ap.add_argument("--clips", type=int, default=8, help="tracking clips per step (once tracking has started)")
    ap.add_argument("--frames", type=int, default=6, help="frames per tracking clip")
    ap.add_argument("--per-clip", type=int, default=2, help="objects tracked per clip")
    ap.add_argument("--track-from", type=float, default=0.3,
                    help="share of the budget trained on detection alone before tracking clips join")
    ap.add_argument("--track-weight", type=float, default=1.0, help="weight of the tracking loss")
    ap.add_argument("--events", type=float, default=0.5, help="share of tracking steps with EVENTS clips")
    ap.add_argument("--lookalike", type=float, default=0.0,
                    help="share of mixed-style tracking clips whose shapes all look alike (kind and colour of the "
                         "first), so that the tracker learns to tell its object from look-alikes (0: none)")
    ap.add_argument("--absent-weight", type=float, default=1.0,
                    help="weight of the object score's BCE on frames where the object is absent (as the SAM 2 "
                         "demo's; the tracker has never called an object absent at 1)")
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--wd", type=float, default=0.05)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--max-steps", type=int, default=0, help="stop after this many steps too (0: the budget only)")
    ap.add_argument("--smoke", action="store_true", help="CPU-sized defaults (3 steps of 2 images and 2 clips of 3 "
                    "frames, tracking from the start, at most 1 minute) and a small evaluation")
    ap.add_argument("--iou-aware", action="store_true", help="Meta's IoU-aware score targets (default: 1 per match)")
    ap.add_argument("--init", help="start from this checkpoint's weights (one this script wrote), e.g. to go on "
                    "training across device calls")
    ap.add_argument("--track-only", action="store_true", help="train the tracker (and its neck) alone on tracking "
                    "clips, the detector frozen; use with --init")
    ap.add_argument("--image-mix", type=float, default=0.0, help="with --track-only: share of steps that prompt "
                    "objects on single frames (boxes, points) instead of tracking clips")
    ap.add_argument("--image-objects", type=int, default=4, help="objects a frame in those steps")
    ap.add_argument("--amp", action="store_true", help="bf16 autocast on the CPU too (it is always on with CUDA)")
    if "--smoke" in sys.argv[1:]:  # CPU-sized defaults; flags given still win
        ap.set_defaults(images=2, chunk=2, clips=2, frames=3, track_from=0.0, warmup=2, minutes=1.0, max_steps=3)
    a = ap.parse_args()
    if a.frames < 2 or a.images < 1 or a.chunk < 1 or a.clips < 0 or a.per_clip < 1 or a.minutes <= 0:
        ap.error("--frames must be at least 2 (frame 0 starts a track), --images, --chunk and --per-clip at least 1, "
                 "--clips at least 0 and --minutes positive; got %s" % vars(a))
    if not 0.0 <= a.lookalike <= 1.0:
        ap.error("--lookalike is a share, 0 to 1; got %s" % a.lookalike)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    amp = device.type == "cuda" or a.amp
    torch.manual_seed(TRAIN_SEED)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    os.makedirs(a.out, exist_ok=True)
    log = log_to(os.path.join(a.out, "train_log.txt"))
    tv = ensure_torchvision()
    if not torch.cuda.is_available():  # (the CPU smoke) Meta's geometry encoder pins a small tensor and the
        torch.Tensor.pin_memory = lambda self, *args, **kwargs: self  # tracker moves memories with .cuda()
        torch.Tensor.cuda = lambda self, *args, **kwargs: self
    # Meta's modules checkpoint activations when training (the decoder asserts it is on); their recomputation in
    # backward does not repeat the forward here (cached masks and shapes differ: torch's CheckpointError). The demo
    # model needs ~1.3 GiB, so run the checkpointed calls straight through.
    torch.utils.checkpoint.checkpoint = lambda fn, *args, use_reentrant=None, **kwargs: fn(*args, **kwargs)
    t_build = time.time()
    model, FindStage = build(a.sam3, device, log)
    if a.init:
        init = torch.load(a.init, map_location=device)["model"]
        model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in init.items()})
    if a.track_only:
        if a.clips < 1:
            ap.error("--track-only needs --clips of at least 1")
        for name, p in model.named_parameters():
            p.requires_grad_(name.startswith("tracker.") or ".sam2_convs." in name)
    model.train()
    n_params = sum(p.numel() for p in model.parameters())
    n_det = sum(p.numel() for p in model.detector.parameters())
    gpu = torch.cuda.get_device_name() if device.type == "cuda" else "cpu"
    log(f"torch {torch.__version__}, {tv}, device {gpu}, config "
        f"{ {k: v for k, v in CONFIG.items() if k != 'prompts'} }, tracker {TRACKER}, {n_params} parameters "
        f"({n_det} detector; {sum(p.numel() for p in model.parameters() if p.requires_grad)} trained), built in {time.time() - t_build:.1f} s, args {vars(a)}")
    opt = torch.optim.AdamW(param_groups(model, a.wd), lr=a.lr, betas=(0.9, 0.999))
    S = CONFIG["image_size"]
    mask_size = 4 * S // CONFIG["patch"]
    det_gen = PaletteScenes(TRAIN_SEED, device)
    clip_gens = {False: PaletteClips(TRAIN_SEED + 1, device, a.frames, None, a.lookalike),
                 True: PaletteClips(TRAIN_SEED + 2, device, a.frames, sam2_demo.EVENTS, a.lookalike)}
    image_gen = PaletteClips(TRAIN_SEED + 3, device, 1, None)
    budget = a.minutes * 60
    start = time.time()
    step, hist, tracking_steps, skipped, prompt_steps = 0, [], 0, 0, 0
    # A failure mid-run (on the GPU, where this script gets one call) still saves what was trained and evaluates it.
    error = None
    try:
        while True:
            elapsed = time.time() - start
            if elapsed >= budget or (a.max_steps and step >= a.max_steps):
                break
            cosine = 0.5 * (1 + math.cos(math.pi * min(1.0, elapsed / budget)))
            lr = a.lr * min(1.0, (step + 1) / a.warmup) * cosine
            for g in opt.param_groups:
                g["lr"] = lr
            if not a.track_only:
                sc = render_scenes(det_gen, a.images, a.chunk, S)
                phrases, img_ids, targets = sample_phrases(det_gen.py, sc["kind"], sc["colour"], sc["valid"])
                # targets of each phrase, valid ones first: masks at the mask head's size (soft), [N, T, s, s]
                tvalid = targets.to(torch.uint8).sort(dim=1, descending=True, stable=True)
                order = tvalid.indices.to(device)
                tvalid = tvalid.values.bool().to(device)
                tm = masks_at(sc["masks"], mask_size)[img_ids.to(device)]
                tm = torch.gather(tm, 1, order.view(*order.shape, 1, 1).expand(-1, -1, mask_size, mask_size))
                images = sc["images"]
            with_track = (a.track_only or elapsed >= a.track_from * budget) and a.clips > 0
            prompting = a.track_only and det_gen.py.random() < a.image_mix
            frames = 1 if prompting else a.frames
            if with_track:
                events = det_gen.py.random() < a.events
                cgen = image_gen if prompting else clip_gens[events]
                # a prompt step renders as many frames as a clip step
                n_clips = a.clips * a.frames if prompting else a.clips
                clip = make_clips(cgen, n_clips, min(a.chunk, a.clips) * a.frames // frames, S)
                obj_clip, obj_slot = sam2_demo.pick_objects(cgen, clip["gt"], clip["focus"], frames,
                                                            a.image_objects if prompting else a.per_clip)
                with_track = obj_clip.numel() > 0
            if a.track_only and not with_track:
                continue  # no object in these clips
            if with_track:
                rows = (obj_clip[:, None] * frames + torch.arange(frames, device=device)).flatten()
                images = clip["images"][rows] if a.track_only else torch.cat([images, clip["images"][rows]])
                gt = clip["gt"][obj_clip[:, None] * frames + torch.arange(frames, device=device), obj_slot[:, None]]
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
                backbone = model.detector.backbone.forward_image(images)
                if a.track_only:
                    det_loss = torch.zeros((), device=device)
                    parts = dict(ce=0.0, presence=0.0, l1=0.0, giou=0.0, mask=0.0, dice=0.0)
                else:
                    out = ground(model, FindStage, backbone, phrases, img_ids, device)
                    det_loss, parts = detection_loss(out, tm, tvalid, a.iou_aware)
                loss = det_loss
                trk = None
                if with_track:
                    B = 0 if a.track_only else sc["images"].shape[0]
                    feats, pos, sizes = tracker_features(model.tracker, backbone,
                                                         torch.arange(B, B + rows.numel(), device=device))
                    if prompting:
                        trk = prompt_step(model.tracker, feats, pos, sizes, gt[:, 0], image_gen)
                        n_of = obj_clip.numel()
                    else:
                        _, _, trk = track(model.tracker, feats, pos, sizes, gt[:, 0:1].float(), gt, a.frames,
                                          train=True, absent_weight=a.absent_weight)
                        n_of = obj_clip.numel() * (a.frames - 1)
                    loss = loss + a.track_weight * (trk["mask"] + trk["iou"] + trk["cls"]) / n_of
            opt.zero_grad(set_to_none=True)
            if not torch.isfinite(loss):  # skip the step rather than spoil the weights; give up after 20
                skipped += 1
                log(f"step {step + 1}: loss {float(loss)} (detection {float(det_loss)}), step skipped")
                if skipped >= 20:
                    raise RuntimeError("20 steps with a non-finite loss")
                continue
            loss.backward()
            gnorm = torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 1.0)
            opt.step()
            step += 1
            row = [det_loss.item()] + [parts[k] for k in ("ce", "presence", "l1", "giou", "mask", "dice")]
            if trk is not None:
                tracking_steps += 1
                prompt_steps += int(prompting)
                row += [scalar(trk["mask"]) / n_of, scalar(trk["iou"]) / n_of, scalar(trk["cls"]) / n_of,
                        trk["best_iou"] / max(trk["present"], 1)]
            hist.append(row)
            if step % 25 == 0 or step in (1, 5) or a.smoke:
                recent = hist[-25:]
                m = torch.tensor([r[:7] for r in recent]).mean(0).tolist()
                msg = (f"step {step} t {time.time() - start:.0f}s lr {lr:.2e} det {m[0]:.3f} (ce {m[1]:.4f} presence "
                       f"{m[2]:.4f} l1 {m[3]:.3f} giou {m[4]:.3f} mask {m[5]:.4f} dice {m[6]:.3f})")
                tr = [r[7:] for r in recent if len(r) > 7]
                if tr:
                    t = torch.tensor(tr).mean(0).tolist()
                    msg += f" track mask {t[0]:.3f} iou {t[1]:.4f} cls {t[2]:.4f} train IoU {t[3]:.3f}"
                log(msg + f" grad {float(gnorm):.2f}")
    except Exception as e:  # noqa: BLE001
        import traceback
        error = f"{type(e).__name__}: {e}"
        log(f"training stopped at step {step} by {error}\n{traceback.format_exc()}")
    train_s = time.time() - start
    log(f"trained {step} steps ({tracking_steps} with tracking clips, {prompt_steps} of them prompt steps) in "
        f"{train_s:.0f} s"
        + (f", peak memory {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB" if device.type == "cuda" else ""))

    sd = fp16_state_dict(model)
    path = os.path.join(a.out, NAME)
    torch.save({"model": sd}, path)
    size = os.path.getsize(path)
    log(f"wrote {path}: {size} bytes, {len(sd)} tensors, {n_params} parameters")
    assert size <= MAX_CHECKPOINT_BYTES, f"{path} is {size} bytes, over {MAX_CHECKPOINT_BYTES}"

    # Evaluate what Java runs: the fp16 weights in fp32.
    model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in sd.items()})
    model.float()
    t_eval = time.time()
    try:
        results = evaluate(model, FindStage, device, a.smoke, log)
    except Exception as e:  # noqa: BLE001 (the checkpoint is written; say what failed)
        import traceback
        results = dict(error=f"{type(e).__name__}: {e}")
        log(f"evaluation failed: {traceback.format_exc()}")
    summary = dict(config={k: v for k, v in CONFIG.items() if k != "prompts"}, tracker=TRACKER,
                   parameters=n_params, detector_parameters=n_det, checkpoint_bytes=size, steps=step,
                   tracking_steps=tracking_steps, prompt_steps=prompt_steps, skipped_steps=skipped, training_error=error,
                   train_seconds=round(train_s),
                   eval_seconds=round(time.time() - t_eval), torch=torch.__version__,
                   device=torch.cuda.get_device_name() if device.type == "cuda" else "cpu", args=vars(a), eval=results,
                   last_losses=torch.tensor([r[:7] for r in hist[-50:]]).mean(0).tolist() if hist else None,
                   date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    log(f"summary: {json.dumps(results)}")
    if error:
        sys.exit(f"training stopped early ({error}); the checkpoint holds the weights of step {step}")


if __name__ == "__main__":
    main()
