#!/usr/bin/env python3
"""Meta's SAM 3 video predictor (Sam3VideoPredictor, facebookresearch/sam3) in bf16 on the GPU, the anchor of
io.samstream.bench.Sam3VideoBench: frames/s for the same `streams x phrases` scenarios over the same generated clip,
at the release's shapes with random weights, written as the same TSV columns.

The model: Meta's own build_sam3_video_model (sam3/model_builder.py) with load_from_HF=False and no checkpoint, so
its modules keep the builder's random initialisation at the release shapes (ViT 1024 x 32 at 1008, text encoder
1024 x 24, detector 256 with 200 queries, tracker 256 / memory 64 x 7); its BPE vocabulary file is the repository's
test vocabulary (the text encoder keeps its 49408-row embedding; a phrase's 32 ids are looked up in it, so the
vocabulary does not change the speed). Sam3VideoPredictor's constructor would download sam3.pt, so the predictor
object is made without it and given the built model; everything else is the predictor's API as users call it:
start_session on a folder of frames, add_prompt(frame 0, text), propagate_in_video forward from frame 1 (a stream
processes every frame once; Meta's default would process the prompted frame again). bf16: Meta's tracker enters a
CUDA bf16 autocast for the whole process when it is built, and every call here runs under torch.autocast(bfloat16)
as well. --compile builds with compile=True: Meta's _compile_model then compiles the ViT + necks, the fusion
encoder, the decoder and the mask head (max-autotune), the tracker's memory encoder and mask decoder (max-autotune)
and memory attention (max-autotune-no-cudagraphs, dynamic) on the first propagation; one untimed pass of the first
scenario compiles them before anything is timed. --compile-mode MODE puts every part on one mode instead.

About 5 instances a stream (--instances), by Sam3VideoBench's rule on frame 0 (see its class comment): the
session's own detection path (run_backbone_and_detection, thresholds at 0) gives frame 0's probabilities and masks;
the detection threshold is the best probability below the k-th best, for the smallest k >= N that keeps N
detections after Meta's nms_masks at IoU 0.1, else NMS off (det_nms_thresh 0) and k = N; the new-object threshold
is the same; max_num_objects = N per session (one phrase a session; the model's thresholds are set to the session's
phrase's before each of its calls). The tracker's object-score head
(tracker.sam_mask_decoder.pred_obj_score_head.layers.2.bias) is set to +10 so tracked objects are judged present.
--heuristics off (the default) builds Meta's variant without temporal disambiguation
(apply_temporal_disambiguation=False: no hot-start, re-conditioning or memory selection): with random weights
every two masks overlap, and the hot-start rules would remove all but about one object. Both sides use the same.

Several streams: Meta's predictor tracks one video per session and one text prompt per session, with no batching
across sessions, so a scenario opens streams x phrases sessions on the one predictor and advances their
propagate_in_video generators in turn (frame t of every session, then t + 1), as Meta's API allows. The sessions
share one decoded copy of the clip (Meta's loader is called once per folder; it would keep one per session).

Timing: `warmup` frames a session first, then `repeats` windows of `frames` frames of every stream, wall time each
(every yield brings the frame's masks to the host as numpy, so a yield is a finished frame); the median window's
total frames/s. Frames are decoded, resized to 1008 and normalized when a session starts, outside the timing (the
Java side times SAM 3's pre-processing in each step; its preprocess_ms column says how much). Device memory: used
on the whole device (torch.cuda.mem_get_info) at the end, and its growth since the warm-up (Meta's session keeps
every frame's masks).

  PYTHONPATH=.ref/sam3_src:tools/sam3_fixtures python3 bench/sam3_torch.py OUT.tsv [--scenarios 1x1,4x1,16x1]
      [--frames 10] [--warmup 16] [--repeats 3] [--instances 5] [--heuristics off|on] [--size 640x480]
      [--compile [--compile-mode MODE]] [--sam3 .ref/sam3_src]

.ref/sam3_src holds Meta's sam3 package and ftfy (git-ignored, fetched, never committed: staged by
tools/sam3_fixtures/stage_meta_sam3.sh); tools/sam3_fixtures has the stubs for modules the import chain names but
this never uses (make_sam3_fixtures.import_meta). tools/device/run-sam3-video-bench.sh runs this and then
Sam3VideoBench in one device call.
"""
import argparse
import gc
import importlib
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import torch

import make_sam3_fixtures as fx

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VOCAB = os.path.join(REPO, "gpu/src/test/resources/fixtures/sam3/tokenizer/test_bpe_vocab.txt.gz")
# Sam3VideoBench.PHRASES: a scenario with P phrases takes the first P
PHRASES = ["red circle", "blue square", "green triangle", "yellow disc"]
OBJECT_SCORE_BIAS = "tracker.sam_mask_decoder.pred_obj_score_head.layers.2.bias"
PRESENT_LOGIT = 10.0
META_NMS_IOU = 0.1
HOTSTART_DELAY = 15  # build_sam3_video_model's, with the heuristics on: outputs come this many frames late
COLUMNS = ("impl\tconfig\tdevice\tstreams\tphrases\tframes_timed\tms_per_frame_per_stream\tframes_per_s_total\t"
           "frames_per_s_total_all\tobjects_per_frame\ttracks_per_frame\tdetections_per_frame\tdevice_memory_mb\t"
           "device_memory_growth_mb\tobject_memory_mb_per_object\tpreprocess_ms\tsettings")


def log(msg):
    print("[sam3_torch %s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def clip(width, height, n):
    """Sam3VideoBench.clip pixel for pixel: a gradient and five shapes (discs and squares) on straight lines."""
    colours = [(220, 40, 40), (40, 60, 220), (40, 190, 70), (230, 200, 40), (200, 60, 200)]
    side = min(width, height)
    y, x = np.mgrid[0:height, 0:width].astype(np.int64)
    base = np.stack([60 + x * 80 // width, 70 + y * 60 // height, 90 + (x + y) * 50 // (width + height)], axis=-1)
    frames = []
    for t in range(n):
        f = base.copy()
        for i in range(5):
            r = side * (8 + i) // 100
            cx = width * (15 + 17 * i) // 100 + (1 if i % 2 == 0 else -1) * (width * t // 320)
            cy = height * (25 + 12 * i) // 100 + (i % 3 - 1) * (height * t // 480)
            if i % 2 == 0:
                sel = (x - cx) ** 2 + (y - cy) ** 2 <= r * r
            else:
                sel = (np.abs(x - cx) <= r) & (np.abs(y - cy) <= r)
            f[sel] = colours[i]
        frames.append(f.astype(np.uint8))
    return frames


def build(args):
    """Meta's video model from its builder (random weights) and a Sam3VideoPredictor around it."""
    # the video path falls back to its own Triton / CPU connected components and NMS when these are missing: a stub
    # would look present and break them (as make_sam3_video_fixtures.py does)
    fx.STUBBED = [s for s in fx.STUBBED if s not in ("cc_torch", "torch_generic_nms", "skimage")]
    fx.import_meta(args.sam3)
    builder = importlib.import_module("sam3.model_builder")
    predictor_mod = importlib.import_module("sam3.model.sam3_video_predictor")
    t0 = time.time()
    # the same random weights in every run: unseeded, the frame-0 calibration (and with it the detections a frame
    # and Meta's time a frame) moves from call to call
    torch.manual_seed(args.seed)
    model = builder.build_sam3_video_model(checkpoint_path=None, load_from_HF=False, bpe_path=VOCAB,
                                           apply_temporal_disambiguation=args.heuristics == "on", device="cuda",
                                           compile=args.compile).eval()
    with torch.no_grad():
        model.state_dict()[OBJECT_SCORE_BIAS].fill_(PRESENT_LOGIT)
    log("built Meta's video model (random weights): %.0fM parameters in %.1f s"
        % (sum(p.numel() for p in model.parameters()) / 1e6, time.time() - t0))
    predictor = predictor_mod.Sam3VideoPredictor.__new__(predictor_mod.Sam3VideoPredictor)
    predictor.async_loading_frames = False
    predictor.video_loader_type = "cv2"
    predictor.model = model
    # one decoded copy of the clip for every session (see the header)
    video = importlib.import_module("sam3.model.sam3_video_inference")
    load, loaded = video.load_resource_as_video_frames, {}

    def load_once(resource_path, **kw):
        if resource_path not in loaded:
            loaded[resource_path] = load(resource_path=resource_path, **kw)
        return loaded[resource_path]

    video.load_resource_as_video_frames = load_once
    return model, predictor


def threshold_at(p, k):
    """The best probability below the k-th best of p (sorted, best first), or 0: exactly k pass `> threshold`
    unless the k-th ties with the next (then all the tied ones), in any dtype the scores come in."""
    below = p[k:][p[k:] < p[k - 1]]
    return float(below[0]) if len(below) else 0.0


def calibrate(model, folder, phrase, target):
    """Sam3VideoBench.calibrate's rule on frame 0 through the session's own detection path."""
    from sam3.perflib.nms import nms_masks
    state = model.init_state(resource_path=folder)
    state["input_batch"].find_text_batch[0] = phrase  # text id 0 is the phrase on every frame, as add_prompt sets
    saved = model.score_threshold_detection, model.det_nms_thresh
    model.score_threshold_detection, model.det_nms_thresh = 0.0, 0.0
    try:
        det = model.run_backbone_and_detection(
            frame_idx=0, num_frames=state["num_frames"], input_batch=state["input_batch"],
            geometric_prompt=state["constants"]["empty_geometric_prompt"], feature_cache={}, reverse=False,
            allow_new_detections=True)
    finally:
        model.score_threshold_detection, model.det_nms_thresh = saved
    probs, masks = det["scores"], det["mask"]
    p = np.sort(probs.float().cpu().numpy())[::-1]
    if len(p) < target:
        sys.exit("%r: only %d queries, %d instances asked" % (phrase, len(p), target))

    def count(threshold, nms):
        if nms > 0:
            return int(nms_masks(pred_probs=probs, pred_masks=masks, prob_threshold=threshold,
                                 iou_threshold=nms).sum())
        return int((probs > threshold).sum())

    best = ",".join("%.5f" % v for v in p[:8])
    lo, hi = target, len(p)
    if count(threshold_at(p, hi), META_NMS_IOU) >= target:
        while lo < hi:
            mid = (lo + hi) // 2
            if count(threshold_at(p, mid), META_NMS_IOU) >= target:
                hi = mid
            else:
                lo = mid + 1
        t = threshold_at(p, lo)
        return t, META_NMS_IOU, "threshold %.6f, nms %.2f, %d detections on frame 0 (best %s)" % (
            t, META_NMS_IOU, count(t, META_NMS_IOU), best)
    t = threshold_at(p, target)
    n = count(t, 0.0)
    return t, 0.0, "threshold %.6f, nms 0.00, %d detections on frame 0 (best %s); NMS off: no threshold leaves %d " \
                   "detections after NMS at %.1f%s" % (t, n, best, target, META_NMS_IOU,
                                                      "; ties let %d through" % n if n > target else "")


def device_used():
    free, total = torch.cuda.mem_get_info()
    return total - free


def use(model, calibration):
    """A phrase's thresholds on the model (its attributes serve every session): detection, new object, NMS IoU."""
    threshold, nms, _ = calibration
    model.score_threshold_detection = model.new_det_thresh = threshold
    model.det_nms_thresh = nms


def measure(model, predictor, folder, streams, phrases, frames, warmup, repeats, counter, calibrations):
    """One scenario: streams x phrases sessions stepped in turn, each at its phrase's thresholds; the TSV row's
    figures."""
    sessions = []  # per stream: its sessions' (id, generator, phrase)
    for _ in range(streams):
        own = []
        for phrase in PHRASES[:phrases]:
            use(model, calibrations[phrase])
            sid = predictor.handle_request({"type": "start_session", "resource_path": folder})["session_id"]
            predictor.handle_request({"type": "add_prompt", "session_id": sid, "frame_index": 0, "text": phrase})
            gen = predictor.handle_stream_request({"type": "propagate_in_video", "session_id": sid,
                                                   "propagation_direction": "forward", "start_frame_index": 1})
            own.append((sid, gen, phrase))
        sessions.append(own)

    def tracked(sid):
        ids = predictor._ALL_INFERENCE_STATES[sid]["state"]["tracker_metadata"].get("obj_ids_all_gpu")
        return 0 if ids is None else len(ids)

    def step_all():
        """Frame t of every stream; the objects each shows and tracks."""
        shown = tracks = 0
        for own in sessions:
            for sid, gen, phrase in own:
                use(model, calibrations[phrase])
                out = next(gen)["outputs"]
                shown += len(out["out_obj_ids"])
                tracks += tracked(sid)
        return shown, tracks

    try:
        for _ in range(warmup):
            step_all()
        torch.cuda.synchronize()
        memory_warm = device_used()
        calls0, dets0 = counter["calls"], counter["detections"]
        fps, shown, tracks = [], 0, 0
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(frames):
                s, k = step_all()
                shown, tracks = shown + s, tracks + k
            fps.append(streams * frames / (time.perf_counter() - t0))
        memory_end = device_used()
        calls, dets = counter["calls"] - calls0, counter["detections"] - dets0
    finally:
        for own in sessions:
            for sid, gen, _ in own:
                gen.close()
                predictor.handle_request({"type": "close_session", "session_id": sid})
        gc.collect()
        torch.cuda.empty_cache()
    steps = streams * frames * repeats
    med = statistics.median(fps)
    return dict(fps=fps, median=med, shown=shown / steps, tracks=tracks / steps,
                detections=dets / calls if calls else 0.0, memory=memory_end / 1e6,
                growth=(memory_end - memory_warm) / 1e6)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--scenarios", default="1x1,4x1,16x1", help="streams x phrases, comma-separated")
    p.add_argument("--frames", type=int, default=10, help="frames of every stream per timed window")
    p.add_argument("--warmup", type=int, default=16, help="frames of every stream before the timed windows")
    p.add_argument("--repeats", type=int, default=3, help="timed windows (the median is reported)")
    p.add_argument("--instances", type=int, default=5, help="objects per phrase (threshold rule, object limit)")
    p.add_argument("--heuristics", choices=("off", "on"), default="off",
                   help="Meta's temporal disambiguation (hot-start, re-conditioning, memory selection)")
    p.add_argument("--size", default="640x480", help="the clip's frame size, WxH")
    p.add_argument("--seed", type=int, default=0, help="seeds the random weights (the same model in every run)")
    p.add_argument("--compile", action="store_true", help="build with compile=True (Meta's torch.compile path)")
    p.add_argument("--compile-mode", default="meta",
                   help="meta: Meta's mode per part; any torch.compile mode: that mode for every part")
    p.add_argument("--sam3", default=".ref/sam3_src", help="the folder holding Meta's sam3 package (and ftfy)")
    a = p.parse_args()
    scenarios = [tuple(int(v) for v in s.split("x")) for s in a.scenarios.split(",")]
    if max(ph for _, ph in scenarios) > len(PHRASES):
        sys.exit("at most %d phrases a stream" % len(PHRASES))
    width, height = (int(v) for v in a.size.split("x"))
    if a.compile and a.compile_mode != "meta":
        compile_ = torch.compile
        torch.compile = lambda fn=None, **kw: compile_(fn, **dict(kw, mode=a.compile_mode))
    how = ("compiled (%s)" % ("Meta's modes: max-autotune; memory attention max-autotune-no-cudagraphs"
                              if a.compile_mode == "meta" else a.compile_mode)) if a.compile else "eager"

    model, predictor = build(a)
    skip = HOTSTART_DELAY - 1 if a.heuristics == "on" else 0  # frames processed before the first yield, less one
    n = 1 + skip + a.warmup + a.repeats * a.frames + 2
    folder = tempfile.mkdtemp(prefix="sam3-bench-clip-")
    import PIL.Image
    for t, f in enumerate(clip(width, height, n)):
        PIL.Image.fromarray(f).save(os.path.join(folder, "%d.png" % t))
    log("clip: %d frames of %dx%d in %s" % (n, width, height, folder))

    # count the detections each frame hands to the tracker (after the threshold and NMS)
    counter = dict(calls=0, detections=0)
    detect = model.run_backbone_and_detection

    def counting(**kw):
        out = detect(**kw)
        counter["calls"] += 1
        counter["detections"] += len(out["scores"])
        return out

    rows = [COLUMNS, "#meta\trelease\t%s, torch %s, bf16 autocast, %s, Sam3VideoPredictor, heuristics %s, clip %dx%d"
            % (torch.cuda.get_device_name(0), torch.__version__, how, a.heuristics, width, height)]
    log(rows[-1])
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
        calibrations = {}
        for phrase in PHRASES[:max(ph for _, ph in scenarios)]:
            calibrations[phrase] = calibrate(model, folder, phrase, a.instances)
            rows.append("#calibration\t%s\t%s" % (phrase, calibrations[phrase][2]))
            log(rows[-1])
        model.run_backbone_and_detection = counting
        model.max_num_objects = a.instances
        if a.compile:
            t0 = time.time()
            st, ph = scenarios[0]
            measure(model, predictor, folder, st, ph, a.frames, a.warmup, 1, counter, calibrations)
            rows.append("#compile\tuntimed pass of %dx%d: %.1f s" % (st, ph, time.time() - t0))
            log(rows[-1])
        for streams, phrases in scenarios:
            r = measure(model, predictor, folder, streams, phrases, a.frames, a.warmup, a.repeats, counter,
                        calibrations)
            settings = ", ".join('"%s" > %.6f nms %.2f' % (ph, calibrations[ph][0], calibrations[ph][1])
                                 for ph in PHRASES[:phrases])
            rows.append("meta\trelease\tcuda:%s\t%d\t%d\t%d\t%.1f\t%.2f\t%s\t%.2f\t%.2f\t%.2f\t%.0f\t%.0f\t-\t-\t"
                        "heuristics %s, %s, max objects %d a session, object score +%.0f"
                        % ("compiled" if a.compile else "eager", streams, phrases, a.repeats * a.frames,
                           1000.0 * streams / r["median"], r["median"], ",".join("%.2f" % v for v in r["fps"]),
                           r["shown"], r["tracks"], r["detections"], r["memory"], r["growth"], a.heuristics,
                           settings, a.instances, PRESENT_LOGIT))
            log(rows[-1])
            with open(a.out, "w") as f:
                f.write("\n".join(rows) + "\n")
    with open(a.out, "w") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
