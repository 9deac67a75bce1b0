#!/usr/bin/env python3
"""Meta's segment-anything prompt encoder + mask decoder (vit_b shapes, random weights) in eager PyTorch on
this GPU, at the prompt-set counts samstream's DecoderBench measured, and the side-by-side table.

Runs on the GPU machine, after io.samstream.bench.DecoderBench wrote its TSV:

    PYTHONPATH=.ref python3 bench/decoder_torch.py --java decoder-bench.tsv --commit C --out table.md

Meta's source is not part of samstream (carry it as .ref/segment_anything). The mask decoder runs in bf16;
the prompt encoder in fp32 (Meta's PositionEmbeddingRandom concatenates an fp32 padding point to the
coordinates, which a bf16 Gaussian matrix then refuses; it is a few small ops either way) and its outputs
are cast to bf16. As SamPredictor.predict_torch: one image embedding, P prompt sets batched (the decoder
repeats the embedding P times). "GPU" = CUDA events around `iters` back-to-back calls with everything on
the device; "end to end" adds the host copy of the low-res logits (as float32) and IoU predictions, what
samstream's decodeBatch returns to Java.
"""
import argparse
import datetime
import time

import torch


def meta_modules():
    from segment_anything.modeling import MaskDecoder, PromptEncoder, TwoWayTransformer
    pe = PromptEncoder(embed_dim=256, image_embedding_size=(64, 64), input_image_size=(1024, 1024), mask_in_chans=16)
    dec = MaskDecoder(num_multimask_outputs=3,
                      transformer=TwoWayTransformer(depth=2, embedding_dim=256, mlp_dim=2048, num_heads=8),
                      transformer_dim=256, iou_head_depth=3, iou_head_hidden_dim=256)
    return pe.eval().cuda(), dec.eval().to(device="cuda", dtype=torch.bfloat16)


def make_inputs(kind, sets, g):
    if kind == "point":
        coords = torch.rand(sets, 1, 2, generator=g) * 1024
        labels = torch.ones(sets, 1, dtype=torch.int64)
        return dict(points=(coords.cuda(), labels.cuda()), boxes=None, masks=None), True
    x0 = torch.rand(sets, 1, generator=g) * 512
    y0 = torch.rand(sets, 1, generator=g) * 512
    boxes = torch.cat([x0, y0, x0 + 256, y0 + 256], dim=1)
    masks = torch.randn(sets, 1, 256, 256, generator=g)
    return dict(points=None, boxes=boxes.cuda(), masks=masks.cuda()), False


def run(pe, dec, emb, inputs, multimask, to_host):
    sparse, dense = pe(**inputs)
    low, iou = dec(image_embeddings=emb, image_pe=pe.get_dense_pe().to(torch.bfloat16),
                   sparse_prompt_embeddings=sparse.to(torch.bfloat16), dense_prompt_embeddings=dense.to(torch.bfloat16),
                   multimask_output=multimask)
    if to_host:
        return low.float().cpu(), iou.float().cpu()
    return low, iou


def time_meta(pe, dec, kind, sets, iters):
    g = torch.Generator().manual_seed(sets)
    emb = torch.randn(1, 256, 64, 64, generator=g).cuda().to(torch.bfloat16)
    inputs, multimask = make_inputs(kind, sets, g)
    with torch.inference_mode():
        for _ in range(3):
            run(pe, dec, emb, inputs, multimask, False)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            run(pe, dec, emb, inputs, multimask, False)
        end.record()
        torch.cuda.synchronize()
        gpu = start.elapsed_time(end) / iters
        walls = []
        for _ in range(iters):
            t0 = time.perf_counter()
            run(pe, dec, emb, inputs, multimask, True)
            walls.append((time.perf_counter() - t0) * 1000)
        walls.sort()
    return gpu, walls[len(walls) // 2]


def read_java(path):
    rows, overlap, meta, profile = {}, [], {}, []
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if p[0] == "decoder":
                rows[(p[1], int(p[2]))] = dict(e2e_ms=float(p[3]), gpu_ms=float(p[4]))
            elif p[0] == "overlap":
                overlap.append(dict(frames=int(p[1]), sets=int(p[2]), enc=float(p[3]), dec=float(p[4]),
                                    serial=float(p[5]), both=float(p[6])))
            elif p[0] == "meta":
                meta[p[1]] = p[2]
            elif p[0] == "profile":
                profile.append((int(p[1]), p[2], float(p[3])))
    return rows, overlap, meta, profile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--java", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--commit", default="?")
    args = ap.parse_args()
    rows, overlap, meta, profile = read_java(args.java)
    pe, dec = meta_modules()
    theirs = {}
    for kind, sets in sorted(rows) or [("point", 1), ("point", 64)]:
        base = kind.split(" ")[0]   # "point (no graph)" is samstream's variant of "point"
        if (base, sets) not in theirs:
            iters = 200 if sets == 1 else 30
            theirs[(base, sets)] = time_meta(pe, dec, base, sets, iters)
            g, w = theirs[(base, sets)]
            print(f"meta {base} {sets} sets: {g:.3f} ms GPU, {w:.3f} ms end to end", flush=True)

    gpu = torch.cuda.get_device_name(0)
    pool = int(meta.get("decoder_pool", "0"))
    out = ["# vit_b prompt encoder + mask decoder: samstream CUDA vs Meta segment-anything eager (bf16 decoder)",
           "",
           f"- date: {datetime.date.today().isoformat()}",
           f"- GPU: {gpu}; torch {torch.__version__}; samstream commit {args.commit}; {meta.get('device', '')}",
           "- random weights in vit_b's decoder shapes, one 64x64x256 embedding, P prompt sets per call batched;",
           "  'point': one random foreground point per set, multimask (3 masks); 'box+mask': a box and a mask",
           "  input (low-res logits) per set, single mask (tracking).",
           "- GPU: samstream = CUDA events around the decoder's kernels (after its uploads, before its download),",
           "  median per call, replaying one captured CUDA graph per batch shape ('no graph': every kernel",
           "  launched from Java); Meta = CUDA events around back-to-back calls with everything on the device.",
           "  End to end: samstream = decodeBatch() from Java prompts + embedding to Java float[] logits (uploads,",
           "  fp32 logits download, copies); Meta = the call + .float().cpu() of logits and IoU; medians.",
           f"- samstream decoder memory: one pool of {pool / 2**20:.0f} MiB for 64 sets per batch.",
           "- Meta's prompt encoder runs in fp32 (its padding point is fp32), the mask decoder in bf16.",
           "",
           "| prompts | sets | samstream GPU ms | samstream sets/s (GPU) | samstream end-to-end ms | sets/s | "
           "Meta GPU ms | Meta sets/s (GPU) | Meta end-to-end ms | sets/s | GPU ratio | end-to-end ratio |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(rows):
        kind, sets = key
        r = rows[key]
        mg, mw = theirs[(kind.split(" ")[0], sets)]
        out.append(f"| {kind} | {sets} | {r['gpu_ms']:.3f} | {1000 * sets / r['gpu_ms']:.0f} | {r['e2e_ms']:.3f} | "
                   f"{1000 * sets / r['e2e_ms']:.0f} | {mg:.3f} | {1000 * sets / mg:.0f} | {mw:.3f} | "
                   f"{1000 * sets / mw:.0f} | {mg / r['gpu_ms']:.2f}x | {mw / r['e2e_ms']:.2f}x |")
    if profile:
        total = sum(ms for _, _, ms in profile)
        out += ["", f"samstream, where the GPU time goes at {profile[0][0]} point sets (kernels launched one by one with "
                f"events between them; summed over the layers; {total:.2f} ms in all):",
                "", "| step | ms | share |", "|---|---|---|"]
        for _, label, ms in sorted(profile, key=lambda r: -r[2]):
            out.append(f"| {label} | {ms:.3f} | {100 * ms / total:.1f}% |")
    for o in overlap:
        out += ["", f"Encoder / decoder overlap (samstream): {o['frames']} frames, each the vit_b encoder on 1 image "
                f"then the decoder on {o['sets']} point prompt sets; wall ms for all frames:",
                "", "| encode only | decode only | serialized (one thread) | encoder thread + decoder thread | speed-up |",
                "|---|---|---|---|---|",
                f"| {o['enc']:.1f} | {o['dec']:.1f} | {o['serial']:.1f} | {o['both']:.1f} | "
                f"{o['serial'] / o['both']:.2f}x |"]
    text = "\n".join(out) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
