#!/usr/bin/env python3
"""Meta's SAM 2.1 in bf16 (autocast) on the GPU, the anchor of Sam2PartsBench and Sam2VideoBench: the same model
parts at the same shapes (random weights, input 1024), and the video predictor propagating a clip with 1 and 8
objects (frames/s). --predictor picks which predictor:
  eager  SAM2VideoPredictor as its notebooks run it;
  vos    SAM2VideoPredictorVOS, what Meta's README figures come from (build_sam2_video_predictor(vos_optimized=True)):
         the image encoder, memory encoder, memory attention, prompt encoder and mask decoder each torch.compile'd
         with mode max-autotune (CUDA graphs included). Under torch 2.11 the predictor then fails ("accessing tensor
         output of CUDAGraphs that has been overwritten by a subsequent run": it keeps a component's outputs in its
         state across calls), so each compiled forward here starts a new CUDA-graph step
         (torch.compiler.cudagraph_mark_step_begin) and its outputs are cloned: a few copies per frame, Meta's
         setting otherwise. --compile-mode max-autotune-no-cudagraphs compiles without CUDA graphs (no clones).
         TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS=ATEN keeps the autotuning within a device run (Triton's GEMM
         search takes 7-40 s per GEMM). One untimed pass over the clip first: the memory attention (dynamic shapes)
         compiles again as the memory fills.

  PYTHONPATH=.ref:tools/sam2_fixtures python bench/sam2_torch.py OUT.tsv [--models hiera_tiny,hiera_base_plus]
      [--parts --batches 1,8] [--repeats 7] [--frames 40] [--streams 8,32] [--predictor eager|vos]
      [--compile-mode max-autotune]

.ref holds Meta's sam2 package (git-ignored; fetched, never committed); tools/sam2_fixtures has the model builder
(make_sam2_fixtures.build_model: Meta's classes with SAM 2.1's video settings, a hydra stub when hydra is missing).
Timing: CUDA events around 10 back-to-back passes after two warm-up passes, the median of repeats; the predictor:
wall time per yielded frame (synchronised), the median of repeats over `frames` frames after 5 warm-up frames.
"""
import argparse
import statistics
import time

import torch
import torch.utils._pytree as pytree

import make_sam2_fixtures as fx

PASSES = 10
CONFIGS = {
    "hiera_tiny": fx.CONFIGS["hiera_t"],
    # sam2.1_hiera_b+.yaml
    "hiera_base_plus": dict(fx.CONFIGS["hiera_t"], embed_dim=112, heads=2, stages=(2, 3, 16, 3),
                            global_att=(12, 16, 20), window_spec=(8, 4, 14, 7), bkg=(14, 14)),
}


def timed(fn, repeats):
    fn()
    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(PASSES):
            fn()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end) / PASSES)
    return out


def row(model, part, batch, ms):
    med = statistics.median(ms)
    return f"{model}\t{part}\t{batch}\t{med:.3f}\t{med / batch:.3f}\t" + ",".join(f"{m:.3f}" for m in ms)


def parts(name, model, batch, repeats):
    dev = "cuda"
    hw, c, m = 64 * 64, 256, 64
    pointer_tokens = 16 * (c // m)
    mem_tokens = 7 * hw + pointer_tokens
    img = torch.randn(batch, 3, 1024, 1024, device=dev)
    curr = torch.randn(hw, batch, c, device=dev)
    pos = torch.randn(hw, batch, c, device=dev)
    memory = torch.randn(mem_tokens, batch, m, device=dev)
    memory_pos = torch.randn(mem_tokens, batch, m, device=dev)
    pix = torch.randn(batch, c, 64, 64, device=dev)
    masks = torch.randn(batch, 1, 1024, 1024, device=dev)
    rows = []
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
        rows.append(row(name, "image encoder", batch, timed(lambda: model.forward_image(img), repeats)))
        rows.append(row(name, "memory attention (7 memories + 16 pointers)", batch, timed(
            lambda: model.memory_attention(curr=[curr], curr_pos=[pos], memory=memory, memory_pos=memory_pos,
                                           num_obj_ptr_tokens=pointer_tokens), repeats)))
        rows.append(row(name, "memory encoder", batch, timed(
            lambda: model.memory_encoder(pix, masks, skip_mask_sigmoid=True), repeats)))
    return rows


def stepped(forward):
    """A compiled forward whose every call is a CUDA-graph step of its own and whose outputs are the caller's."""
    def call(*args, **kwargs):
        torch.compiler.cudagraph_mark_step_begin()
        out = forward(*args, **kwargs)
        return pytree.tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, out)
    return call


def build(name, kind, compile_mode):
    """Meta's predictor at CONFIGS[name]: eager, or SAM2VideoPredictorVOS with its components compiled."""
    if kind == "eager":
        return fx.build_model(CONFIGS[name]).cuda().eval()
    from sam2.sam2_video_predictor import SAM2VideoPredictorVOS
    compile_ = torch.compile
    # Meta's components are compiled in its constructor, mode max-autotune; the mode asked for instead, if another.
    torch.compile = lambda fn, **kw: compile_(fn, **dict(kw, mode=compile_mode))
    try:
        model = fx.build_model(CONFIGS[name], base=SAM2VideoPredictorVOS)
        # SAM2Base(compile_image_encoder=True), as vos_optimized sets it.
        model.image_encoder.forward = torch.compile(model.image_encoder.forward, mode=compile_mode, fullgraph=True,
                                                    dynamic=False)
    finally:
        torch.compile = compile_
    if "no-cudagraphs" not in compile_mode:
        for part in (model.image_encoder, model.memory_encoder, model.memory_attention, model.sam_prompt_encoder,
                     model.sam_mask_decoder):
            part.forward = stepped(part.forward)
    return model.cuda().eval()


def predictor(name, model, objects, frames, repeats, warm=False):
    """frames/s of propagate_in_video over `frames` frames (after 5), boxes on frame 0 for `objects` objects."""
    import sam2.sam2_video_predictor as svp
    total = frames + 5
    video = torch.randn(total, 3, 1024, 1024, device="cuda")
    svp.load_video_frames = lambda **kw: (video, 1024, 1024)
    fps = []
    for r in range(repeats + (1 if warm else 0)):
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
            state = model.init_state(video_path="<generated>")
            for o in range(objects):
                x0 = 60 + 110 * o
                model.add_new_points_or_box(state, frame_idx=0, obj_id=o + 1, box=[x0, 300, x0 + 100, 420])
            stamps = []
            for _t, _ids, masks in model.propagate_in_video(state, start_frame_idx=0):
                masks.sum().item()  # the frame's masks are ready
                stamps.append(time.perf_counter())
            spent = stamps[-1] - stamps[5]
            if not (warm and r == 0):
                fps.append((len(stamps) - 6) / spent)
            model.reset_state(state)
    med = statistics.median(fps)
    return f"{name}\tvideo predictor frames/s, {objects} object(s)\t1\t{med:.2f}\t\t" + ",".join(
        f"{f:.2f}" for f in fps)


def predictor_streams(name, model, streams, frames):
    """Total frames/s of `streams` videos tracked at once, one object each: the predictor takes one video per call, so
    the videos' propagate_in_video generators advance in turn (frame t of every video, then t + 1)."""
    import sam2.sam2_video_predictor as svp
    total = frames + 5
    video = torch.randn(total, 3, 1024, 1024, device="cuda")
    svp.load_video_frames = lambda **kw: (video, 1024, 1024)
    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
        states, gens = [], []
        for _ in range(streams):
            state = model.init_state(video_path="<generated>")
            model.add_new_points_or_box(state, frame_idx=0, obj_id=1, box=[60, 300, 160, 420])
            states.append(state)
            gens.append(model.propagate_in_video(state, start_frame_idx=0))
        for _ in range(5):
            for g in gens:
                next(g)[2].sum().item()
        t0 = time.perf_counter()
        for _ in range(frames):
            for g in gens:
                next(g)[2].sum().item()
        spent = time.perf_counter() - t0
        for state in states:
            model.reset_state(state)
    fps = streams * frames / spent
    return f"{name}\tvideo predictor total frames/s, {streams} streams x 1 object\t{streams}\t{fps:.2f}\t\t{fps:.2f}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--models", default="hiera_tiny,hiera_base_plus")
    p.add_argument("--batches", default="1,8")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--frames", type=int, default=40)
    p.add_argument("--streams", default="", help="also Meta's total frames/s over this many videos at once, e.g. 8,32")
    p.add_argument("--parts", action="store_true", help="the model parts too (Sam2PartsBench's anchor)")
    p.add_argument("--predictor", choices=("eager", "vos"), default="eager")
    p.add_argument("--compile-mode", default="max-autotune", help="vos: torch.compile's mode for every component")
    a = p.parse_args()
    fx.install_stubs()
    rows = ["model\tpart\tbatch\tms_per_pass_median\tms_per_item\tms_all",
            f"#meta\tgpu\t{torch.cuda.get_device_name(0)}, torch {torch.__version__}, bf16 autocast, "
            + ("eager" if a.predictor == "eager" else f"SAM2VideoPredictorVOS, {a.compile_mode}")]
    for name in a.models.split(","):
        model = build(name, a.predictor, a.compile_mode)
        for b in [int(x) for x in a.batches.split(",")] if a.parts else []:
            rows += parts(name, model, b, a.repeats)
            print("\n".join(rows[-3:]), flush=True)
        for objects in (1, 8):
            rows.append(predictor(name, model, objects, a.frames, 3, warm=a.predictor == "vos"))
            print(rows[-1], flush=True)
        for streams in [int(x) for x in a.streams.split(",") if x]:
            rows.append(predictor_streams(name, model, streams, max(10, a.frames // 2)))
            print(rows[-1], flush=True)
        with open(a.out, "w") as f:
            f.write("\n".join(rows) + "\n")
        del model
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
