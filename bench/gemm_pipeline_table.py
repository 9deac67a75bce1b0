#!/usr/bin/env python3
"""The Hopper GEMM pipeline v1 vs v2 table from one `run-gpu-tests.sh gemmpipe` run (no PyTorch needed).

    python3 bench/gemm_pipeline_table.py --dir OUT --commit SHA --out gemm-pipeline.md

Reads, from OUT: gemm-kernels.tsv (CudaKernelBench, filter "gemm": every tile at the encoder shapes; the Hopper
128-row tiles of both pipelines also launched persistently) and encoder-v1.tsv / encoder-v2.tsv (EncoderBench,
vit_b, random weights; the whole forward in a CUDA graph with -Dsamstream.cuda.gemmPipeline=v1 / v2, plus the
eager v1 / v2 variant rows of each run). Writes per shape and tile the TFLOP/s of v1 and v2 (one CTA per tile and
persistent) and their ratio, then per batch the encoder's img/s with each pipeline. Exit status 1 when a file
is missing or has no rows (so the run's status shows it).
"""
import argparse
import datetime
import os
import re
import sys


def read_kernels(path):
    rows, device = {}, ""
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if p[0] == "device":
                device = p[1]
            elif len(p) >= 6 and p[0] == "gemm":
                variant = p[1].replace(" (default)", "")
                rows[variant] = (p[2], float(p[3]), float(p[4]))
    return rows, device


def read_encoder(path):
    enc, var = {}, {}
    if not os.path.exists(path):
        return enc, var
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if p[0] == "encoder":
                enc[int(p[1])] = float(p[2])
            elif p[0] == "variant":
                var[(int(p[1]), p[2])] = float(p[3])
    return enc, var


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--commit", default="?")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    kpath = os.path.join(a.dir, "gemm-kernels.tsv")
    if not os.path.exists(kpath):
        print(f"missing {kpath}", file=sys.stderr)
        return 1
    rows, device = read_kernels(kpath)
    out = [f"# Hopper GEMM pipeline v1 vs v2 ({datetime.date.today()}, commit {a.commit})", "",
           f"Device: {device}. TFLOP/s = 2MNK / median time of 20 launches (CudaKernelBench). v1: gemm_sm90.cuh "
           "(producer waits for its copies, LAG = stages - 2); v2: gemm_sm90_v2.cuh (stages completed by "
           "cp.async.mbarrier.arrive.noinc; 4 stages at 128x256 and 256x192, 7 at 128x128). 'pers.': persistent launch "
           "(128-row tiles).", "",
           "| shape | epilogue | M N K | tile | v1 | v2 | v2/v1 | v1 pers. | v2 pers. | v2 pers./v1 |",
           "|---|---|---|---|---:|---:|---:|---:|---:|---:|"]
    # v1 rows "NAME EPI H128x256" pair with v2 rows "NAME EPI H2_128x256".
    pat = re.compile(r"^(.*) (H128x256|H128x128|H256x192)$")
    n = 0
    for variant, (shape, ms, tf) in rows.items():
        m = pat.match(variant)
        if not m:
            continue
        head, tile = m.group(1), m.group(2)
        v2tile = "H2_" + tile[1:]   # H128x256 -> H2_128x256
        v2 = rows.get(f"{head} {v2tile}")
        p1 = rows.get(f"{head} {tile} persistent")
        p2 = rows.get(f"{head} {v2tile} persistent")
        if v2 is None:
            continue
        name, _, epi = head.rpartition(" ")
        f = lambda r: f"{r[2]:.0f}" if r else "-"
        out.append(f"| {name} | {epi} | {shape} | {tile} | {tf:.0f} | {v2[2]:.0f} | {v2[2] / tf:.2f} | {f(p1)} | "
                   f"{f(p2)} | {(p2[2] / tf) if p2 else float('nan'):.2f} |")
        n += 1
    out += ["", "## vit_b encoder (EncoderBench, random weights, GPU time per batch)", "",
            "| batch | graph v1 img/s | graph v2 img/s | v2/v1 | eager v1 ms | eager v2 ms |", "|---:|---:|---:|---:|---:|---:|"]
    e1, var1 = read_encoder(os.path.join(a.dir, "encoder-v1.tsv"))
    e2, var2 = read_encoder(os.path.join(a.dir, "encoder-v2.tsv"))
    for b in sorted(set(e1) | set(e2)):
        g1, g2 = e1.get(b), e2.get(b)
        ips = lambda ms: f"{1000 * b / ms:.1f}" if ms else "-"
        ratio = f"{g1 / g2:.2f}" if g1 and g2 else "-"
        ev1 = var1.get((b, "eager launches, GEMM pipeline v1"))
        ev2 = var1.get((b, "eager launches, GEMM pipeline v2"))
        fm = lambda x: f"{x:.2f}" if x else "-"
        out.append(f"| {b} | {ips(g1)} | {ips(g2)} | {ratio} | {fm(ev1)} | {fm(ev2)} |")
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))
    if n == 0 or not e1 or not e2:
        print("!!! gemm-pipeline table incomplete (no v1/v2 GEMM pairs or a missing encoder run)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
