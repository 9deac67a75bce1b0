#!/usr/bin/env python3
"""The 2:4 sparsity speed table from one `run-gpu-tests.sh sparse` run (no PyTorch needed).

    python3 bench/sparse_table.py --dir OUT --commit SHA --out sparse-speed.md

Reads, from OUT: sparse-kernels.tsv (CudaKernelBench rows: the default dense tile and every 2:4 sparse tile at the
vit_b encoder shapes, M = 32 x 4096 tokens) and encoder-none-all.tsv, encoder-2of4-all.tsv, encoder-2of4-mlp.tsv
(EncoderBench: vit_b encoder, random weights). Writes per
GEMM shape the default dense tile and the best sparse tile (ms, TFLOP/s counted as the dense 2MNK, and the
speed-up), then per batch the encoder's GPU img/s dense / 2:4 all / 2:4 mlp and the per-step times.
"""
import datetime
import os

from bench_tsv import Encoder, read_kernels, table_arguments


def main():
    a = table_arguments()
    rows, device = read_kernels(os.path.join(a.dir, "sparse-kernels.tsv"))
    kernels = [(v, shape, ms, rate) for op, v, shape, ms, rate in rows if op == "gemm"]
    md = [f"# 2:4 sparse vs dense on the GPU ({device})", "",
          f"- date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; commit {a.commit}",
          "- `tools/device/run-gpu-tests.sh sparse` (CudaKernelBench filter gemm; EncoderBench --sparsity)", "",
          "## GEMM, vit_b shapes, M = 32 x 4096 (TFLOP/s as 2MNK for both)", "",
          "| shape | dense default tile | ms | TFLOP/s | best sparse tile | ms | TFLOP/s | speed-up |",
          "|---|---|---|---|---|---|---|---|"]
    shapes = []
    for v, shape, ms, rate in kernels:
        name = " ".join(v.split()[:2])
        if not v.startswith("square") and name not in shapes:
            shapes.append(name)
    for name in shapes:
        dense = [r for r in kernels if r[0].startswith(name + " ") and "sparse" not in r[0]]
        sparse = [r for r in kernels if r[0].startswith(name + " ") and "sparse" in r[0]]
        d = next((r for r in dense if "(default)" in r[0]), min(dense, key=lambda r: r[2]) if dense else None)
        s = min(sparse, key=lambda r: r[2]) if sparse else None
        if d and s:
            md.append(f"| {name} | {d[0][len(name) + 1:]} | {d[2]:.3f} | {d[3]:.0f} | {s[0][len(name) + 1:]} | "
                      f"{s[2]:.3f} | {s[3]:.0f} | {d[2] / s[2]:.2f}x |")
    md += ["", "All rows:", "", "| variant | shape | ms | TFLOP/s |", "|---|---|---|---|"]
    md += [f"| {v} | {sh} | {ms:.3f} | {r:.0f} |" for v, sh, ms, r in kernels]
    runs = [("dense", "encoder-none-all.tsv"), ("2:4 all", "encoder-2of4-all.tsv"), ("2:4 mlp", "encoder-2of4-mlp.tsv")]
    data = {label: Encoder(os.path.join(a.dir, f)) for label, f in runs}
    batches = sorted(set().union(*[set(v.batches) for v in data.values()]))
    md += ["", "## vit_b encoder (random weights, 1024 px), GPU time per batch", "",
           "| batch | " + " | ".join(f"{l} ms (img/s)" for l, _ in runs) + " | pool GiB (dense / 2:4 all) |",
           "|---|" + "---|" * (len(runs) + 1)]
    for b in batches:
        cells = []
        for label, _ in runs:
            e = data[label].batches.get(b)
            cells.append(f"{e[0]:.2f} ({1000 * b / e[0]:.0f})" if e else "-")
        pools = [data[l].batches.get(b) for l in ("dense", "2:4 all (default: TMA)")]
        pool = " / ".join(f"{p[2] / 2**30:.2f}" if p else "-" for p in pools)
        md.append(f"| {b} | " + " | ".join(cells) + f" | {pool} |")
    for b in batches:
        steps = []
        for label, _ in runs:
            for k in data[label].profile.get(b, {}):
                if k not in steps:
                    steps.append(k)
        if not steps:
            continue
        md += ["", f"Per step at batch {b}, ms (profiled pass):", "",
               "| step | " + " | ".join(l for l, _ in runs) + " |", "|---|" + "---|" * len(runs)]
        for k in steps:
            md.append(f"| {k} | " + " | ".join(
                f"{data[l].profile.get(b, {}).get(k, float('nan')):.3f}" for l, _ in runs) + " |")
    with open(a.out, "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
