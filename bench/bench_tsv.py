"""Readers of the TSV files the Java benchmarks write, for the table scripts (sparse_table.py).

CudaKernelBench: a "device" line, then one line per measurement: op, variant, shape, ms, rate, unit.
EncoderBench: "meta" key value; "encoder" batch ms end-to-end-ms pool-bytes memory-delta; "variant" batch name ms;
"profile" batch step ms.
"""
import argparse
import os


def table_arguments():
    """The table scripts' command line: --dir (the run's output folder), --commit, --out (the markdown file)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--commit", default="?")
    ap.add_argument("--out", required=True)
    return ap.parse_args()


def read_kernels(path):
    """[(op, variant, shape, ms, rate)] in file order, and the device line."""
    rows, device = [], ""
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if p[0] == "device":
                device = p[1]
            elif len(p) >= 6:
                rows.append((p[0], p[1], p[2], float(p[3]), float(p[4])))
    return rows, device


class Encoder:
    """One EncoderBench TSV: meta, per batch (ms, e2e ms, pool bytes), variants[(batch, name)], profile[batch][step]."""

    def __init__(self, path):
        self.meta, self.batches, self.variants, self.profile = {}, {}, {}, {}
        if not os.path.exists(path):
            return
        with open(path) as f:
            for line in f:
                p = line.rstrip("\n").split("\t")
                if p[0] == "meta":
                    self.meta[p[1]] = p[2]
                elif p[0] == "encoder":
                    self.batches[int(p[1])] = (float(p[2]), float(p[3]), int(p[4]))
                elif p[0] == "variant":
                    self.variants[(int(p[1]), p[2])] = float(p[3])
                elif p[0] == "profile":
                    self.profile.setdefault(int(p[1]), {})[p[2]] = float(p[3])
