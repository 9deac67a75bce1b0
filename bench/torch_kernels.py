#!/usr/bin/env python3
"""PyTorch's own bf16 kernels on the shapes CudaKernelBench times, and the side-by-side table.

Runs on the GPU machine, right after CudaKernelBench in the same call (tools/device/run-gpu-tests.sh):

    python3 bench/torch_kernels.py --java cuda-bench.tsv --commit SHA --out table.md

Measures, on random bf16 data (never zeros), median of CUDA-event timings after warm-up:
  * the matrix-rate ceiling: an 8192^3 torch.matmul;
  * F.linear (cuBLAS) at the vit_b encoder GEMM shapes, M = 32 x 4096 tokens, alone and with the
    elementwise ops our kernel fuses into its epilogue, done the eager way (GELU, residual add);
  * attention per block at batch 8, vit_b (12 heads x 64) and vit_h (16 x 80), windowed (200 windows
    of 196 tokens per 8 images; q, k, v given already partitioned, so torch does no partition copies)
    and global (4096 tokens): Meta's eager code path (bf16 matmuls, einsum rel-pos, softmax),
    F.scaled_dot_product_attention with the rel-pos bias as an additive mask (the bias computed each
    time, as it must be), and SDPA without any bias (flash; not the same function, a lower bound).
Then writes a markdown table with the samstream numbers from --java next to PyTorch's.
"""
import argparse
import datetime
import math
import statistics
import sys

import torch
import torch.nn.functional as F

DEV = "cuda"
BF = torch.bfloat16


def timed(fn, repeats=20, warmup=3):
    """Median milliseconds of fn() over `repeats` runs, each between two CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def rand(*shape, std=1.0):
    return (torch.randn(*shape, device=DEV, dtype=torch.float32) * std).to(BF)


def gemms(rows):
    out_rows = rows
    m = 32 * 4096
    sq = 8192
    a, b = rand(sq, sq), rand(sq, sq, std=sq ** -0.5)
    ms = timed(lambda: torch.matmul(a, b))
    rows.append(("gemm", "square torch.matmul", "M=N=K=8192", ms, 2 * sq ** 3 / ms / 1e9, "TFLOP/s"))
    del a, b
    x_full = rand(m, 3072)
    for name, n, k, epi in [("qkv", 2304, 768, "bias"), ("proj", 768, 768, "bias+residual"),
                            ("mlp.lin1", 3072, 768, "bias+gelu"), ("mlp.lin2", 768, 3072, "bias+residual")]:
        x = x_full[:, :k].contiguous() if k != 3072 else x_full
        w, bias = rand(n, k, std=k ** -0.5), rand(n, std=0.5)
        res = rand(m, n)
        flop = 2.0 * m * n * k
        ms = timed(lambda: F.linear(x, w, bias))
        rows.append(("gemm", f"{name} F.linear (+bias)", f"M={m} N={n} K={k}", ms, flop / ms / 1e9, "TFLOP/s"))
        if epi == "bias+gelu":
            ms = timed(lambda: F.gelu(F.linear(x, w, bias)))
            rows.append(("gemm", f"{name} F.linear + F.gelu (eager)", f"M={m} N={n} K={k}", ms, flop / ms / 1e9, "TFLOP/s"))
        if epi == "bias+residual":
            ms = timed(lambda: res.add_(F.linear(x, w, bias)))
            rows.append(("gemm", f"{name} F.linear + residual add_ (eager)", f"M={m} N={n} K={k}", ms, flop / ms / 1e9,
                         "TFLOP/s"))
        del x, w, bias, res
    del x_full
    # vit_b at batch 1, the neck's 3x3 conv rows, vit_l / vit_h widths: cuBLAS alone (F.linear, +bias when the
    # samstream kernel has one), for the rate ceiling next to samstream's old and Hopper kernels.
    for name, rows, n, k in [("b1 qkv", 4096, 2304, 768), ("b1 proj", 4096, 768, 768), ("b1 mlp.lin1", 4096, 3072, 768),
                             ("b1 mlp.lin2", 4096, 768, 3072), ("neck 3x3", m, 256, 2304),
                             ("vit_l qkv", m, 3072, 1024), ("vit_l mlp.lin1", m, 4096, 1024),
                             ("vit_l mlp.lin2", m, 1024, 4096), ("vit_h qkv", m, 3840, 1280),
                             ("vit_h proj", m, 1280, 1280), ("vit_h mlp.lin1", m, 5120, 1280),
                             ("vit_h mlp.lin2", m, 1280, 5120)]:
        x, w = rand(rows, k), rand(n, k, std=k ** -0.5)
        bias = None if name.startswith("neck") else rand(n, std=0.5)
        ms = timed(lambda: F.linear(x, w, bias))
        rows_flop = 2.0 * rows * n * k
        rows_out = ("gemm", f"{name} F.linear" + ("" if bias is None else " (+bias)"), f"M={rows} N={n} K={k}", ms,
                    rows_flop / ms / 1e9, "TFLOP/s")
        out_rows.append(rows_out)
        del x, w, bias


def rel_pos_bias(q, rel_h, rel_w, s):
    """add_decomposed_rel_pos's two einsums for q [B, heads, s*s, hd] -> bias [B, heads, s*s, s*s]."""
    b, h, n, d = q.shape
    idx = torch.arange(s, device=DEV)
    rel = idx[:, None] - idx[None, :] + s - 1
    rh, rw = rel_h[rel], rel_w[rel]                       # [s, s, hd]
    r_q = q.reshape(b, h, s, s, d)
    bh = torch.einsum("bnhwc,hkc->bnhwk", r_q, rh)        # [b, heads, s, s, s]
    bw = torch.einsum("bnhwc,wkc->bnhwk", r_q, rw)
    return (bh[..., :, None] + bw[..., None, :]).reshape(b, h, n, n)


def attention(rows):
    batch = 8
    for heads, hd, model in [(12, 64, "vit_b"), (16, 80, "vit_h")]:
        for window in (14, 0):
            s = window if window else 64
            seqs = batch * 25 if window else batch
            n = s * s
            q, k, v = rand(seqs, heads, n, hd), rand(seqs, heads, n, hd), rand(seqs, heads, n, hd)
            rel_h, rel_w = rand(2 * s - 1, hd, std=0.2), rand(2 * s - 1, hd, std=0.2)
            scale = hd ** -0.5
            flop = seqs * heads * 4.0 * n * n * hd
            shape = f"B={batch} heads={heads} hd={hd}"
            kind = f"{model} {'windowed 14x14' if window else 'global'}"

            def eager():
                attn = (q * scale) @ k.transpose(-2, -1)
                attn = attn + rel_pos_bias(q, rel_h, rel_w, s)
                return attn.softmax(dim=-1) @ v

            def sdpa_bias():
                return F.scaled_dot_product_attention(q, k, v, attn_mask=rel_pos_bias(q, rel_h, rel_w, s))

            def sdpa_plain():
                return F.scaled_dot_product_attention(q, k, v)

            for label, fn in [("Meta eager (bf16)", eager), ("SDPA + rel-pos mask", sdpa_bias),
                              ("SDPA, no bias (flash; lower bound)", sdpa_plain)]:
                try:
                    ms = timed(fn, repeats=10)
                    rows.append(("attention", f"{kind} {label}", shape, ms, flop / ms / 1e9, "TFLOP/s"))
                except Exception as e:  # e.g. out of memory: report and go on
                    print(f"{kind} {label}: {type(e).__name__}: {e}", file=sys.stderr)
                torch.cuda.empty_cache()
            del q, k, v


def layernorm(rows):
    m, c = 32 * 4096, 768
    x, r = rand(m, c), rand(m, c)
    g, b = rand(c), rand(c)
    ms = timed(lambda: F.layer_norm(x, (c,), g, b, 1e-6))
    rows.append(("layernorm", "F.layer_norm", f"rows={m} C=768", ms, 2.0 * m * c * 2 / ms / 1e6, "GB/s"))
    ms = timed(lambda: F.layer_norm(x + r, (c,), g, b, 1e-6))
    rows.append(("layernorm", "x + r, F.layer_norm (eager)", f"rows={m} C=768", ms, 4.0 * m * c * 2 / ms / 1e6, "GB/s"))


def read_java(path):
    device, rows = None, []
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if parts[0] == "device":
                device = parts[1]
            elif len(parts) == 6:
                op, variant, shape, ms, rate, unit = parts
                rows.append((op, variant, shape, float(ms), float(rate), unit))
    return device, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--java", required=True, help="TSV written by io.samstream.bench.CudaKernelBench")
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    java_device, java_rows = read_java(args.java)
    torch_rows = []
    for part in (gemms, attention, layernorm):
        try:
            part(torch_rows)
        except Exception as e:
            print(f"{part.__name__}: {type(e).__name__}: {e}", file=sys.stderr)
        torch.cuda.empty_cache()

    gpu = torch.cuda.get_device_name()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [f"# CUDA kernels vs PyTorch, {gpu}", "",
           f"- date: {now}", f"- commit: {args.commit}", f"- GPU: {gpu}; samstream saw: {java_device}",
           f"- PyTorch {torch.__version__}, CUDA {torch.version.cuda}",
           "- random bf16 data; median of CUDA-event timings per launch after warm-up;"
           " GEMM rates count 2·M·N·K, attention 4·L²·hd per head and sequence (bias work not counted)", ""]
    for op in ("gemm", "attention", "layernorm"):
        out.append(f"## {op}")
        out.append("")
        out.append("| implementation | variant | shape | ms | rate |")
        out.append("|---|---|---|---:|---:|")
        for impl, rows in (("samstream", java_rows), ("PyTorch", torch_rows)):
            for r in rows:
                if r[0] == op:
                    out.append(f"| {impl} | {r[1]} | {r[2]} | {r[3]:.3f} | {r[4]:.1f} {r[5]} |")
        out.append("")
    text = "\n".join(out)
    with open(args.out, "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
