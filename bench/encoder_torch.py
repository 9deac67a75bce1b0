#!/usr/bin/env python3
"""Meta's segment-anything image encoder (vit_b, random weights) in bf16 eager on this GPU, at the batch
sizes samstream's EncoderBench measured, and the side-by-side table of both.

Runs on the GPU machine, after io.samstream.bench.EncoderBench wrote its TSV:

    PYTHONPATH=.ref python3 bench/encoder_torch.py --java encoder-bench.tsv --commit C --out table.md

Meta's source is not part of samstream (carry it as .ref/segment_anything). Timing: CUDA events around
`iters` back-to-back forward passes after 2 warm-up passes, torch.inference_mode, input already on the
GPU (as samstream's GPU figure). Memory: torch.cuda.max_memory_allocated over the timed passes, weights
included.
"""
import argparse
import datetime
import sys
from functools import partial

import torch


# depth, width, heads, global attention blocks of Meta's build_sam_vit_b / _l / _h.
SHAPES = {"vit_b": (12, 768, 12, [2, 5, 8, 11]), "vit_l": (24, 1024, 16, [5, 11, 17, 23]),
          "vit_h": (32, 1280, 16, [7, 15, 23, 31])}


def meta_encoder(model="vit_b"):
    from segment_anything.modeling import ImageEncoderViT
    depth, width, heads, global_blocks = SHAPES[model]
    enc = ImageEncoderViT(depth=depth, embed_dim=width, img_size=1024, mlp_ratio=4,
                          norm_layer=partial(torch.nn.LayerNorm, eps=1e-6), num_heads=heads, patch_size=16,
                          qkv_bias=True, use_rel_pos=True, global_attn_indexes=global_blocks, window_size=14,
                          out_chans=256)
    return enc.eval().to(device="cuda", dtype=torch.bfloat16)


def time_meta(enc, batch, iters):
    x = torch.randn(batch, 3, 1024, 1024, device="cuda", dtype=torch.bfloat16)
    with torch.inference_mode():
        for _ in range(2):
            enc(x)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            enc(x)
        end.record()
        torch.cuda.synchronize()
    ms = start.elapsed_time(end) / iters
    peak = torch.cuda.max_memory_allocated()
    del x
    torch.cuda.empty_cache()
    return ms, peak


def read_java(path):
    rows, profile, meta = {}, {}, {}
    variants = {}
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if p[0] == "encoder":
                b = int(p[1])
                rows[b] = dict(gpu_ms=float(p[2]), e2e_ms=float(p[3]), pool=int(p[4]), meminfo=int(p[5]))
            elif p[0] == "profile":
                profile.setdefault(int(p[1]), []).append((p[2], float(p[3])))
            elif p[0] == "meta":
                meta[p[1]] = p[2]
            elif p[0] == "variant":
                variants.setdefault(int(p[1]), []).append((p[2], float(p[3])))
    meta["variants"] = variants
    return rows, profile, meta


def gib(n):
    return f"{n / 2**30:.2f} GiB"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--java", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--commit", default="?")
    args = ap.parse_args()
    rows, profile, meta = read_java(args.java)
    model = meta.get("model", "vit_b")
    enc = meta_encoder(model)
    meta_res = {}
    for b in sorted(rows) or [1, 8, 32]:
        iters = max(3, 32 // b)
        try:
            meta_res[b] = time_meta(enc, b, iters)
            ms, peak = meta_res[b]
            print(f"meta bf16 eager batch {b}: {ms:.2f} ms, {1000 * b / ms:.1f} img/s, peak {gib(peak)}", flush=True)
        except torch.cuda.OutOfMemoryError as e:
            print(f"meta bf16 eager batch {b}: out of memory: {e}", file=sys.stderr)

    gpu = torch.cuda.get_device_name(0)
    out = [f"# {model} image encoder: samstream CUDA (bf16) vs Meta segment-anything bf16 eager",
           "",
           f"- date: {datetime.date.today().isoformat()}",
           f"- GPU: {gpu}; torch {torch.__version__}; samstream commit {args.commit}; {meta.get('device', '')}",
           f"- random weights in {model}'s shapes, 1024x1024 input; GPU time between CUDA events over back-to-back",
           "  passes with the input already on the device (both sides); samstream 'end to end' adds the fp32",
           "  host->pinned copy, upload, download and pinned->Java copy of encode().",
           "- memory: samstream = its one device pool (weights + activations of that batch) and the cuMemGetInfo",
           "  drop when the backend was opened (pool + module + stream); Meta = torch.cuda.max_memory_allocated",
           "  (weights included).",
           "",
           "| batch | samstream ms/batch | samstream img/s | samstream end-to-end img/s | Meta bf16 eager ms/batch "
           "| Meta img/s | ratio | samstream pool / cuMemGetInfo delta | Meta peak |",
           "|---|---|---|---|---|---|---|---|---|"]
    for b in sorted(rows):
        r = rows[b]
        ours = 1000 * b / r["gpu_ms"]
        e2e = 1000 * b / r["e2e_ms"]
        if b in meta_res:
            mms, peak = meta_res[b]
            theirs = 1000 * b / mms
            out.append(f"| {b} | {r['gpu_ms']:.2f} | {ours:.1f} | {e2e:.1f} | {mms:.2f} | {theirs:.1f} | "
                       f"{ours / theirs:.2f}x | {gib(r['pool'])} / {gib(r['meminfo'])} | {gib(peak)} |")
        else:
            out.append(f"| {b} | {r['gpu_ms']:.2f} | {ours:.1f} | {e2e:.1f} | - | - | - | "
                       f"{gib(r['pool'])} / {gib(r['meminfo'])} | - |")
    variants = meta.get("variants", {})
    if variants:
        out += ["", "samstream variants, same backend, same run (ms/batch; img/s):", "",
                "| batch | default (CUDA graph, Hopper GEMM on sm_90) | " + " | ".join(v for v, _ in variants[min(variants)])
                + " |", "|---" * (2 + len(variants[min(variants)])) + "|"]
        for b in sorted(variants):
            cells = [f"{rows[b]['gpu_ms']:.2f}; {1000 * b / rows[b]['gpu_ms']:.1f}"] if b in rows else ["-"]
            cells += [f"{ms:.2f}; {1000 * b / ms:.1f}" for _, ms in variants[b]]
            out.append(f"| {b} | " + " | ".join(cells) + " |")
    for b in sorted(profile):
        total = sum(ms for _, ms in profile[b])
        out += ["", f"samstream, where the GPU time goes at batch {b} (events between launches; {total:.2f} ms in all):",
                "", "| step | ms | share |", "|---|---|---|"]
        agg = {}
        for label, ms in profile[b]:
            agg[label] = agg.get(label, 0) + ms
        for label, ms in sorted(agg.items(), key=lambda kv: -kv[1]):
            out.append(f"| {label} | {ms:.3f} | {100 * ms / total:.1f}% |")
    text = "\n".join(out) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
