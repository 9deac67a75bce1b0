#!/usr/bin/env python3
"""Video parity fixture for samstream's streaming SAM 3 path (io.samstream.gpu.sam3.video), made by Meta's `sam3`.

Builds Meta's SAM 3 video model (Sam3VideoInferenceWithInstanceInteractivity: the detector Sam3ImageOnVideoMultiGPU
with its second neck, and Sam3TrackerPredictor) from Meta's own classes, composed as build_sam3_video_model and
build_tracker compose them with apply_temporal_disambiguation=True, at the tiny shapes of make_sam3_fixtures.py
(input 112, detector width 32) with a tracker of width 32 (memory 8 x 7, 2 memory-attention layers of 64; the mask
decoder keeps _build_sam_heads' fixed 2048-wide MLP and 256-wide IoU head). Weights: the integer formula of
tools/sam2_fixtures (weight_values) on every parameter of sam3.pt's keys ("detector.*", "tracker.*"); the Java
test regenerates them from keys.txt (DeterministicWeights), so no checkpoint is written.

The clip: FRAMES frames of H x W (generated: a red disc and a blue square moving over a gradient, a green
triangle coming in), each turned into the model input by Sam3Processor's transform (the image path's, so both
sides see the same pixels; it replaces the session loader's fp16 PIL resize). For each entry of SESSIONS (a phrase
and weight overrides), one session: add_prompt(frame 0, text) then propagate_in_video(start_frame_index=1, forward)
- every frame processed once, as a stream processes it (Meta's default propagation would process the prompted frame
a second time). fp32 end to end, checked on every module's inputs (keep_fp32 says how). Thresholds:
random weights give arbitrary scores, so per phrase the detection threshold is set between the 3rd and 4th best
probability on frame 0 and the new-object threshold between the 2nd and 3rd (meta.json says which); the other
heuristics keep Meta's values (NMS 0.1, association 0.1 / 0.5, hot-start 15 / 8 / 8, occlusion 0.7, holes 16,
re-conditioning every 16th frame, memory selection 0.01).

Writes (.npy little endian) into --out:
  frames.npy [T, H, W, 3] uint8, model_inputs.npy [T, 3, S, S] float32, keys.txt, meta.json, and per phrase i and
  frame t (p<i>_f<t>_*): ids [n] int64, probs [n] (out_probs), boxes [n, 4] (out_boxes_xywh, normalized),
  masks (np.packbits of out_binary_masks [n, H, W]); diagnostics: det_scores [k] (detections kept after NMS and
  the threshold), trk_ids [m], trk_scores [m] (object score logits), trk_masks [m, 4g, 4g] (the propagated
  low-resolution masks after hole filling, before suppression).

Usage (where torch, torchvision and timm are; Meta's sam3 in a folder, never committed; CPU by default):
  python3 make_sam3_video_fixtures.py --sam3 .ref/sam3_src --out gpu/src/test/resources/fixtures/sam3/video
"""
import argparse
import importlib
import importlib.util
import inspect
import json
import os
import sys
import time
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_sam3_fixtures as image_fixtures  # noqa: E402  (our own: stubs, Meta's import, the image model)

FRAMES = 8
H, W = 72, 96
# One session per entry. Random heads judge every tracked object absent (object score about -0.11: masks -1024,
# the no-object pointer), so that every detection starts a new object on each frame; as the SAM 2 fixtures do, the
# first session shifts the object-score head so tracked objects are present and really propagated (memory attention,
# mask decoder, memory encoder, association); the second keeps the weights as they are.
SCORE_BIAS = "tracker.sam_mask_decoder.pred_obj_score_head.layers.2.bias"
SESSIONS = [dict(text="red circle", overrides={SCORE_BIAS: 0.5}), dict(text="square", overrides={})]
TRACKER = dict(hidden=32, mem_dim=8, num_maskmem=7, mem_layers=2, mem_ffn=64)
DEFAULTS = dict(det_nms_thresh=0.1, assoc_iou_thresh=0.1, trk_assoc_iou_thresh=0.5, hotstart_delay=15,
                hotstart_unmatch_thresh=8, hotstart_dup_thresh=8,
                suppress_overlapping_based_on_recent_occlusion_threshold=0.7, fill_hole_area=16,
                recondition_every_nth_frame=16, mf_threshold=0.01)

log = image_fixtures.log


def clip():
    """FRAMES uint8 frames: a disc and a square moving right and down, a triangle entering from the left."""
    y, x = np.mgrid[0:H, 0:W].astype(np.int64)
    frames = []
    for t in range(FRAMES):
        r = 60 + (x * 80) // W
        g = 70 + (y * 60) // H
        b = 90 + ((x + y) * 50) // (H + W)
        cx, cy = 20 + 3 * t, 22 + t
        disc = (x - cx) ** 2 + (y - cy) ** 2 <= 11 ** 2
        sx, sy = 62 - 2 * t, 40 + 2 * t
        square = (np.abs(x - sx) <= 9) & (np.abs(y - sy) <= 9)
        tx = -12 + 5 * t
        tri = (y >= 46) & (y <= 68) & (np.abs(x - tx) * 2 <= (y - 46))
        for sel, col in ((disc, (220, 40, 40)), (square, (40, 60, 220)), (tri, (40, 190, 70))):
            r, g, b = np.where(sel, col[0], r), np.where(sel, col[1], g), np.where(sel, col[2], b)
        frames.append(np.stack([r, g, b], axis=-1).astype(np.uint8))
    return np.stack(frames)


def label_8(values):
    """skimage.measure.label's result (8-connected components, background 0) for a 2-D array, in numpy."""
    h, w = values.shape
    labels = np.zeros((h, w), np.int64)
    n = 0
    for sy in range(h):
        for sx in range(w):
            if values[sy, sx] and labels[sy, sx] == 0:
                n += 1
                stack = [(sy, sx)]
                labels[sy, sx] = n
                while stack:
                    cy, cx = stack.pop()
                    for dy in (-1, 0, 1):
                        for dx in (-1, 0, 1):
                            ny, nx = cy + dy, cx + dx
                            if 0 <= ny < h and 0 <= nx < w and values[ny, nx] and labels[ny, nx] == 0:
                                labels[ny, nx] = n
                                stack.append((ny, nx))
    return labels, n


def patch_for_cpu(torch, device):
    """Meta's tracker moves tensors with .cuda() and pins memory; on the CPU both stay where they are. Without
    skimage, connected components come from label_8 (what skimage computes); an empty batch gives empty ones."""
    if device == "cpu":
        torch.Tensor.cuda = lambda self, *a, **k: self
        # the tracker's states store memories on "cuda" unless offloaded: keep them on the CPU
        predictor = importlib.import_module("sam3.model.sam3_tracking_predictor").Sam3TrackerPredictor
        init_state = predictor.init_state

        def init_state_on_cpu(self, *a, **k):
            k["offload_state_to_cpu"] = True
            return init_state(self, *a, **k)

        predictor.init_state = init_state_on_cpu
        log("note: Tensor.cuda is the identity and tracker states stay on the CPU for this CPU run")
    if not torch.cuda.is_available():
        torch.Tensor.pin_memory = lambda self, *a, **k: self
        log("note: Tensor.pin_memory is the identity (no CUDA)")
    cc = importlib.import_module("sam3.perflib.connected_components")
    batched = cc.connected_components_cpu

    def batched_or_empty(values):
        # Meta's CPU fallback stacks an empty list when no mask is left (the GPU kernels take an empty batch)
        if values.shape[0] == 0:
            empty = torch.zeros(values.shape, dtype=torch.int64, device=values.device)
            return empty, empty.clone()
        return batched(values)

    cc.connected_components_cpu = batched_or_empty
    if importlib.util.find_spec("skimage") is None:
        def single(values):
            labels, num = label_8(values.cpu().numpy())
            labels_t = torch.from_numpy(labels)
            counts = torch.zeros_like(labels_t)
            for i in range(1, num + 1):
                sel = labels_t == i
                counts[sel] = sel.sum()
            return labels_t, counts

        cc.connected_components_cpu_single = single
        log("note: no skimage; 8-connected components from our numpy labelling")


class _TorchWithFp32ForBf16(types.ModuleType):
    """`torch` as one module of Meta's sees it: torch.bfloat16 stands for torch.float32, the rest is torch."""

    def __init__(self, torch):
        super().__init__("torch")
        self.__dict__["_torch"] = torch

    def __getattr__(self, name):
        return self._torch.float32 if name == "bfloat16" else getattr(self._torch, name)


def keep_fp32(torch, model):
    """fp32 end to end, and checked. Meta's video model runs in bf16 in three ways: (1) Sam3TrackerPredictor's
    constructor enters a CUDA bf16 autocast for good (build_tracker leaves it); (2) Sam3ImageOnVideoMultiGPU casts
    the tracker's backbone maps to bf16 for its all-gather (sam3_image.py, "usually a no-op ... due to AMP") - the
    one explicit cast that reaches the tracker's fp32 convolutions (conv_s0: "Input type (c10::BFloat16) and bias
    type (float) should be the same"); that module's torch.bfloat16 is made float32 here, so the cast is the
    identity; (3) the predictor stores each frame's memory features as bf16 (maskmem_features.to(torch.bfloat16)).
    (3) is kept: a storage rounding, not arithmetic (they are cast back to fp32 where they meet the object pointers),
    exact and deterministic, and what the Java reference does (Sam3TrackerModel.encodeMemory, as Sam2Model).
    Every module then gets a forward pre-hook that fails on any floating input that is not fp32."""
    image_mod = importlib.import_module("sam3.model.sam3_image")
    uses = [line for line in inspect.getsource(image_mod).splitlines()
            if "torch.bfloat16" in line and not line.strip().startswith("#")]
    if len(uses) != 1:
        raise SystemExit("sam3/model/sam3_image.py uses torch.bfloat16 %d times (1 expected, the all-gather cast of "
                         "the tracker's maps): check keep_fp32 against this version of Meta's code" % len(uses))
    image_mod.torch = _TorchWithFp32ForBf16(torch)
    for device_type in ("cuda", "cpu"):
        if torch.is_autocast_enabled(device_type):
            raise SystemExit("autocast is on for %s: the fixture must be fp32" % device_type)

    def check(module, args, kwargs):
        for a in list(args) + list(kwargs.values()):
            for t in (a if isinstance(a, (list, tuple)) else [a]):
                if isinstance(t, torch.Tensor) and t.is_floating_point() and t.dtype != torch.float32:
                    raise RuntimeError("%s got a %s input: the fixture must be fp32 end to end"
                                       % (names[module], t.dtype))

    names = {mod: name or "model" for name, mod in model.named_modules()}
    for mod in names:
        mod.register_forward_pre_hook(check, with_kwargs=True)
    log("fp32 end to end: no autocast, the all-gather cast to bf16 is the identity, every module checks its "
        "inputs (memories are stored as bf16, as Meta's predictor and the Java reference store them)")


def build_tracker(m, torch, cfg, device):
    """Sam3TrackerPredictor as build_tracker composes it, at the tiny shapes (no backbone: the detector's)."""
    memory = importlib.import_module("sam3.model.memory")
    transformer_mod = importlib.import_module("sam3.sam.transformer")
    predictor = importlib.import_module("sam3.model.sam3_tracking_predictor")
    c, md = TRACKER["hidden"], TRACKER["mem_dim"]
    grid = cfg["image_size"] // cfg["patch"]
    pos = m.position_encoding.PositionEmbeddingSine(num_pos_feats=md, normalize=True, scale=None, temperature=10000,
                                                    precompute_resolution=None)
    downsampler = memory.SimpleMaskDownSampler(embed_dim=c, kernel_size=3, stride=2, padding=1,
                                               interpol_size=[16 * grid, 16 * grid])
    fuser = memory.SimpleFuser(layer=memory.CXBlock(dim=c, kernel_size=7, padding=3, layer_scale_init_value=1e-6,
                                                    use_dwconv=True), num_layers=2)
    maskmem = memory.SimpleMaskEncoder(out_dim=md, position_encoding=pos, mask_downsampler=downsampler, fuser=fuser,
                                       in_dim=c)
    self_attn = transformer_mod.RoPEAttention(embedding_dim=c, num_heads=1, downsample_rate=1, dropout=0.1,
                                              rope_theta=10000.0, feat_sizes=[grid, grid], use_fa3=False,
                                              use_rope_real=False)
    cross_attn = transformer_mod.RoPEAttention(embedding_dim=c, num_heads=1, downsample_rate=1, dropout=0.1,
                                               kv_in_dim=md, rope_theta=10000.0, feat_sizes=[grid, grid],
                                               rope_k_repeat=True, use_fa3=False, use_rope_real=False)
    layer = m.decoder.TransformerDecoderLayerv2(
        cross_attention_first=False, activation="relu", dim_feedforward=TRACKER["mem_ffn"], dropout=0.1,
        pos_enc_at_attn=False, pre_norm=True, self_attention=self_attn, d_model=c, pos_enc_at_cross_attn_keys=True,
        pos_enc_at_cross_attn_queries=False, cross_attention=cross_attn)
    encoder = m.decoder.TransformerEncoderCrossAttention(remove_cross_attention_layers=[], batch_first=True,
                                                         d_model=c, frozen=False, pos_enc_at_input=True, layer=layer,
                                                         num_layers=TRACKER["mem_layers"], use_act_checkpoint=False)
    transformer = m.model_misc.TransformerWrapper(encoder=encoder, decoder=None, d_model=c)
    tracker = predictor.Sam3TrackerPredictor(
        image_size=cfg["image_size"], num_maskmem=TRACKER["num_maskmem"], backbone=None,
        backbone_stride=cfg["patch"], transformer=transformer, maskmem_backbone=maskmem,
        multimask_output_in_sam=True, forward_backbone_per_frame_for_eval=True, trim_past_non_cond_mem_for_eval=False,
        multimask_output_for_tracking=True, multimask_min_pt_num=0, multimask_max_pt_num=1,
        always_start_from_first_ann_frame=False, non_overlap_masks_for_mem_enc=False,
        non_overlap_masks_for_output=False, max_cond_frames_in_attn=4, offload_output_to_cpu_for_eval=False,
        sam_mask_decoder_extra_args={"dynamic_multimask_via_stability": True,
                                     "dynamic_multimask_stability_delta": 0.05,
                                     "dynamic_multimask_stability_thresh": 0.98},
        clear_non_cond_mem_around_input=True, fill_hole_area=0, use_memory_selection=True)
    # its constructor enters a CUDA bf16 autocast for the rest of the thread: leave it, on any device
    tracker.bf16_context.__exit__(None, None, None)
    return tracker


def set_weights(model, torch, weight_values, overrides):
    """The integer formula on every parameter and buffer, then each override (a name -> one value for the whole
    tensor, DeterministicWeights.fromKeyList's overrides); returns keys.txt's lines."""
    keys = []
    state = model.state_dict()
    unknown = set(overrides) - set(state)
    if unknown:
        raise SystemExit("overrides name no tensor of the model: %s" % sorted(unknown))
    with torch.no_grad():
        for name, t in state.items():
            if t.is_complex():
                keys.append("%s %s" % (name, ",".join(str(s) for s in list(t.shape) + [2])))
                continue
            if not t.is_floating_point():
                raise SystemExit("unexpected %s buffer %s" % (t.dtype, name))
            t.copy_(torch.from_numpy(weight_values(name, tuple(t.shape))))
            if name in overrides:
                t.fill_(overrides[name])
            keys.append("%s %s" % (name, ",".join(str(s) for s in t.shape)))
    return keys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sam3", required=True, help="folder holding Meta's sam3 package (and ftfy if not installed)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    cfg = image_fixtures.CONFIGS["tiny"]

    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = args.device
    log("torch %s, device %s -> %s" % (torch.__version__, device, args.out))
    # the video path falls back to its own (triton / CPU) connected components and NMS when these are missing, and
    # patch_for_cpu puts label_8 in skimage's place when it is missing: a stub would look present and break them
    image_fixtures.STUBBED = [s for s in image_fixtures.STUBBED
                              if s not in ("cc_torch", "torch_generic_nms", "skimage")]
    m = image_fixtures.import_meta(args.sam3)
    for name in ["memory", "sam3_tracker_utils", "sam3_tracker_base", "sam3_tracking_predictor", "sam3_video_base",
                 "sam3_video_inference"]:
        importlib.import_module("sam3.model." + name)
    patch_for_cpu(torch, device)
    video_mod = importlib.import_module("sam3.model.sam3_video_inference")
    import PIL.Image
    from torchvision.transforms import v2

    with torch.no_grad():
        detector = image_fixtures.build_model(m, cfg, image_fixtures.TEST_VOCAB, video=True)
        tracker = build_tracker(m, torch, cfg, device)
        model = video_mod.Sam3VideoInferenceWithInstanceInteractivity(
            detector=detector, tracker=tracker, score_threshold_detection=0.5, new_det_thresh=0.7,
            suppress_unmatched_only_within_hotstart=True, min_trk_keep_alive=-1, max_trk_keep_alive=30,
            init_trk_keep_alive=30, suppress_det_close_to_boundary=False, masklet_confirmation_enable=False,
            decrease_trk_keep_alive_for_empty_masklets=False, image_size=cfg["image_size"],
            image_mean=(0.5, 0.5, 0.5), image_std=(0.5, 0.5, 0.5), compile_model=False,
            **{k: v for k, v in DEFAULTS.items() if k != "mf_threshold"})
        model.tracker.mf_threshold = DEFAULTS["mf_threshold"]
        weight_values = image_fixtures.load_weight_values()
        keys = set_weights(model, torch, weight_values, {})
        model = model.to(device).eval()
        for mod in model.modules():  # RoPE tables are plain attributes, made on "cuda" when it exists
            if hasattr(mod, "freqs_cis") and isinstance(mod.freqs_cis, torch.Tensor):
                mod.freqs_cis = mod.freqs_cis.to(device)
        log("built the video model: %d tensors, %d parameters" % (len(keys),
                                                                  sum(p.numel() for p in model.parameters())))
        keep_fp32(torch, model)
    with open(os.path.join(args.out, "keys.txt"), "w") as f:
        f.write("\n".join(keys) + "\n")

    def save(name, a):
        a = a.detach().cpu().numpy() if hasattr(a, "detach") else np.asarray(a)
        if a.dtype == np.float64:
            a = a.astype(np.float32)
        np.save(os.path.join(args.out, name + ".npy"), a)

    frames = clip()
    save("frames", frames)
    S = cfg["image_size"]
    processor = m.sam3_image_processor.Sam3Processor(detector, resolution=S, device=device, confidence_threshold=0.5)
    with torch.inference_mode():
        inputs = torch.stack([processor.transform(v2.functional.to_image(PIL.Image.fromarray(fr)).to(device))
                              for fr in frames]).float()
    save("model_inputs", inputs)

    # record what the frames' detection and propagation gave, for the Java test's diagnostics
    record = {}
    orig_det = model.run_backbone_and_detection
    orig_prop = model.run_tracker_propagation

    def det_wrap(**kw):
        out = orig_det(**kw)
        record.setdefault(kw["frame_idx"], {})["det"] = out["scores"].detach().cpu().clone()
        return out

    def prop_wrap(**kw):
        masks, scores = orig_prop(**kw)
        r = record.setdefault(kw["frame_idx"], {})
        r["trk_ids"] = np.array(kw["tracker_metadata_prev"]["obj_ids_all_gpu"], np.int64)
        r["trk_masks"] = masks.detach().cpu().float().clone()
        r["trk_scores"] = scores.detach().cpu().float().clone()
        return masks, scores

    model.run_backbone_and_detection = det_wrap
    model.run_tracker_propagation = prop_wrap

    phrases = []
    pil_frames = [PIL.Image.fromarray(fr) for fr in frames]
    with torch.inference_mode():
        for i, session in enumerate(SESSIONS):
            phrase = session["text"]
            set_weights(model, torch, weight_values, session["overrides"])
            # thresholds from frame 0's probabilities (random weights): 3 detections pass, 2 can start objects
            text = detector.backbone.forward_text([phrase], device=device)
            backbone = detector.backbone.forward_image(inputs[0:1])
            backbone.update(text)
            find = processor.find_stage
            out = detector.forward_grounding(backbone_out=backbone, find_input=find,
                                             geometric_prompt=detector._get_dummy_prompt(), find_target=None)
            probs = out["pred_logits"][0, :, 0].sigmoid().sort(descending=True).values.cpu().numpy()
            det_thr = float((probs[2] + probs[3]) / 2)
            new_thr = float((probs[1] + probs[2]) / 2)
            if not probs[3] < det_thr < probs[2] or not probs[2] < new_thr < probs[1]:
                log("warning: phrase %r has tied probabilities on frame 0 (%s); thresholds %.6f / %.6f"
                    % (phrase, probs[:4], det_thr, new_thr))
            model.score_threshold_detection = det_thr
            model.new_det_thresh = new_thr
            record.clear()
            state = model.init_state(resource_path=pil_frames, offload_video_to_cpu=(device == "cpu"))
            state["input_batch"].img_batch = inputs.to(device)
            results = {}
            f0, out0 = model.add_prompt(state, frame_idx=0, text_str=phrase)
            results[f0] = out0
            for f, outf in model.propagate_in_video(state, start_frame_idx=1, max_frame_num_to_track=FRAMES,
                                                    reverse=False):
                results[f] = outf
            counts = []
            for t in range(FRAMES):
                o = results[t]
                pre = "p%d_f%d_" % (i, t)
                save(pre + "ids", np.asarray(o["out_obj_ids"], np.int64))
                save(pre + "probs", np.asarray(o["out_probs"], np.float32))
                save(pre + "boxes", np.asarray(o["out_boxes_xywh"], np.float32))
                save(pre + "masks", np.packbits(np.asarray(o["out_binary_masks"], bool).reshape(-1)))
                r = record.get(t, {})
                save(pre + "det_scores", r.get("det", torch.zeros(0)))
                save(pre + "trk_ids", r.get("trk_ids", np.zeros(0, np.int64)))
                save(pre + "trk_scores", r.get("trk_scores", torch.zeros(0)))
                save(pre + "trk_masks", r.get("trk_masks", torch.zeros(0, 4 * (S // cfg["patch"]),
                                                                        4 * (S // cfg["patch"]))))
                counts.append(len(o["out_obj_ids"]))
            phrases.append(dict(text=phrase, overrides=session["overrides"], detection_threshold=det_thr,
                                new_detection_threshold=new_thr,
                                frame0_best_probabilities=[float(p) for p in probs[:5]], objects_per_frame=counts))
            log("phrase %r (overrides %s): thresholds %.5f / %.5f, objects per frame %s, ids %s"
                % (phrase, session["overrides"], det_thr, new_thr, counts,
                   [list(map(int, results[t]["out_obj_ids"])) for t in range(FRAMES)]))
    meta = dict(config="tiny-video", frames=FRAMES, frame_hw=[H, W], image_size=S, phrases=phrases,
                tracker=TRACKER, heuristics=DEFAULTS, pointer_window=min(FRAMES, 16), memory_selection=True,
                session="add_prompt(frame 0) then propagate_in_video(start_frame_index=1, forward)",
                device=device, torch=torch.__version__, numpy=np.__version__, python=sys.version.split()[0],
                made_by="tools/sam3_fixtures/make_sam3_video_fixtures.py with Meta's sam3 (facebookresearch/sam3)",
                seconds=round(time.time() - t0, 1))
    with open(os.path.join(args.out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    total = sum(os.path.getsize(os.path.join(args.out, n)) for n in os.listdir(args.out))
    log("done in %.1f s: %d files, %.2f MB in %s" % (time.time() - t0, len(os.listdir(args.out)), total / 1e6,
                                                     args.out))


if __name__ == "__main__":
    main()
