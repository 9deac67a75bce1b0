#!/usr/bin/env python3
"""The Hopper kernels side by side, from one `run-gpu-tests.sh hopper` run (no PyTorch needed).

    python3 bench/hopper_table.py --dir OUT --commit SHA --out hopper.md

Reads, from OUT:
  hopper-kernels.tsv  CudaKernelBench (filter "gemm .*H", "square", "attention vit_b"): every Hopper GEMM tile
                      at the encoder shapes (v1 gemm_sm90.cuh, v2 gemm_sm90_v2.cuh, tma gemm_sm90_tma.cuh, tma2 the
                      same in CTA pairs, tmas with TMA stores of C, tmap the same with ping-pong consumers; v1 / v2 also persistent), global and windowed attention on mma.sync and on
                      wgmma;
  encoder-P-A.tsv     EncoderBench (vit_b, random weights) with -Dsamstream.cuda.gemmPipeline=P and both
                      attention switches (global, windowed) = A: the CUDA-graph time per batch, the eager variant rows, and
                      where the time goes per step.
Writes per shape and tile width the TFLOP/s of every pipeline, the attention kernels, and per encoder configuration
img/s and the per-step times side by side. Exit status 1 when a file is missing or has no rows.
"""
import datetime
import glob
import os
import re
import sys

from bench_tsv import Encoder, read_kernels, table_arguments

PIPELINES = [("v1", "H{}"), ("v1 pers.", "H{} persistent"), ("v2", "H2_{}"), ("v2 pers.", "H2_{} persistent"),
             ("tma", "HT{}"), ("tma2", "HTC{}"), ("tmas", "HTS{}"), ("tmap", "HTP{}")]


def main():
    a = table_arguments()
    kpath = os.path.join(a.dir, "hopper-kernels.tsv")
    if not os.path.exists(kpath):
        print(f"missing {kpath}", file=sys.stderr)
        return 1
    listed, device = read_kernels(kpath)
    rows = {(op, v.replace(" (default)", "")): (shape, ms, rate) for op, v, shape, ms, rate in listed}
    out = [f"# Hopper kernels side by side ({datetime.date.today()}, commit {a.commit})", "",
           f"Device: {device}. TFLOP/s = 2MNK (GEMM) or the real sequences' 4 L^2 d per head (attention) over the median "
           "of 20 launches (CudaKernelBench). 'pers.': the v1 / v2 kernels launched persistently; tma, tma2, tmas and "
           "tmap are always persistent.", "",
           "| GEMM | epilogue | M N K | tile | " + " | ".join(p for p, _ in PIPELINES) + " | best / v1 |",
           "|---|---|---|---|" + "---:|" * (len(PIPELINES) + 1)]
    heads = {}
    pat = re.compile(r"^(.*) H(128x256|128x128)$")
    for (op, variant) in rows:
        m = pat.match(variant)
        if op == "gemm" and m and not variant.startswith("square"):
            heads.setdefault(m.group(1), set()).add(m.group(2))
    n = 0
    for head in heads:
        for tile in sorted(heads[head], reverse=True):
            vals = [rows.get(("gemm", f"{head} {fmt.format(tile)}")) for _, fmt in PIPELINES]
            shape = next(v[0] for v in vals if v)
            name, _, epi = head.rpartition(" ")
            cells = [f"{v[2]:.0f}" if v else "-" for v in vals]
            best = max(v[2] for v in vals if v)
            ratio = f"{best / vals[0][2]:.2f}" if vals[0] else "-"
            out.append(f"| {name} | {epi} | {shape} | {tile} | " + " | ".join(cells) + f" | {ratio} |")
            n += 1
    sq = [(v, r) for (op, v), r in rows.items() if op == "gemm" and v.startswith("square ")]
    if sq:
        out += ["", "8192^3 without epilogue: " + ", ".join(f"{v[7:]} {r[2]:.0f}" for v, r in sq) + " TFLOP/s"]
    att = [(v, r) for (op, v), r in rows.items() if op == "attention"]
    if att:
        out += ["", "| attention | shape | ms | TFLOP/s |", "|---|---|---:|---:|"]
        out += [f"| {v} | {r[0]} | {r[1]:.3f} | {r[2]:.0f} |" for v, r in att]
    encs = sorted(glob.glob(os.path.join(a.dir, "encoder-*-*.tsv")))
    out += ["", "## vit_b encoder (EncoderBench, random weights, GPU time per batch)", "",
            "| GEMM pipeline | global attention | batch | graph ms | img/s | pool GiB | eager variants (ms) |",
            "|---|---|---:|---:|---:|---:|---|"]
    profiles = []
    for path in encs:
        e = Encoder(path)
        pipe = e.meta.get("gemmPipeline", "?")
        attn = "wgmma" if e.meta.get("attentionWgmma") == "true" else "mma.sync"
        if e.meta.get("windowAttentionWgmma", "false") != e.meta.get("attentionWgmma", "false"):
            attn += " (windowed: " + ("wgmma" if e.meta.get("windowAttentionWgmma") == "true" else "mma.sync") + ")"
        if e.meta.get("windowAttentionHalves") == "true" and e.meta.get("windowAttentionWgmma") == "true":
            attn += " (windowed: half a window per CTA)"
        for b, (ms, _, pool) in sorted(e.batches.items()):
            vs = "; ".join(f"{k}: {t:.2f}" for (bb, k), t in e.variants.items() if bb == b)
            out.append(f"| {pipe} | {attn} | {b} | {ms:.2f} | {1000 * b / ms:.1f} | {pool / 2 ** 30:.2f} | {vs} |")
        profiles.append((f"{pipe} / {attn}", e.profile))
    for b in sorted({b for _, p in profiles for b in p}):
        steps = []
        for _, p in profiles:
            steps += [s for s in p.get(b, {}) if s not in steps]
        out += ["", f"Where the GPU time goes at batch {b} (ms, events between launches):", "",
                "| step | " + " | ".join(name for name, _ in profiles) + " |", "|---|" + "---:|" * len(profiles)]
        for s in steps:
            out.append(f"| {s} | " + " | ".join(f"{p[b][s]:.3f}" if s in p.get(b, {}) else "-" for _, p in profiles)
                       + " |")
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))
    if n == 0 or not encs:
        print("!!! hopper table incomplete (no GEMM rows or no encoder run)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
