#!/usr/bin/env python3
"""Compares a `samstream segment --npy` output directory with a reference expected.npz.

The reference is what tools/fixtures/make_sam_parity_fixtures.py writes (Meta's SamPredictor):
embedding, and per prompt set i masks_i / iou_i / lowres_i. Prints one line per mask and exits 1 when
a bound is missed. Bounds default to the CUDA backend's (bf16): embedding cosine >= 0.999, every mask
IoU >= 0.98, predicted IoU within 0.02; --strict uses the CPU backend's (0.9999 / 0.99 / 0.005).

Usage: python3 compare_segment.py OUT_DIR EXPECTED.npz [--strict]
"""
import sys
from pathlib import Path

import numpy as np


def main():
    out, expected = Path(sys.argv[1]), np.load(sys.argv[2])
    cos_min, iou_min, pred_tol = (0.9999, 0.99, 0.005) if "--strict" in sys.argv else (0.999, 0.98, 0.02)
    ok = True
    emb = np.load(out / "embedding.npy").astype(np.float64).ravel()
    ref = expected["embedding"].astype(np.float64).ravel()
    cos = float(emb @ ref / np.sqrt((emb @ emb) * (ref @ ref)))
    print(f"{out}: embedding cosine {cos:.6f}")
    ok &= cos >= cos_min
    i = 0
    while f"masks_{i}" in expected:
        masks = np.load(out / f"prompt-{i}" / "masks.npy")
        iou = np.load(out / f"prompt-{i}" / "iou.npy")
        lowres = np.load(out / f"prompt-{i}" / "lowres.npy")
        ref_masks, ref_iou = expected[f"masks_{i}"], expected[f"iou_{i}"]
        assert masks.shape == ref_masks.shape and lowres.shape == expected[f"lowres_{i}"].shape, "shapes differ"
        for m in range(masks.shape[0]):
            union = np.logical_or(masks[m], ref_masks[m]).sum()
            mask_iou = 1.0 if union == 0 else np.logical_and(masks[m], ref_masks[m]).sum() / union
            err = abs(float(iou[m]) - float(ref_iou[m]))
            print(f"  set {i} mask {m}: mask IoU {mask_iou:.5f}, predicted IoU error {err:.5f}")
            ok &= mask_iou >= iou_min and err <= pred_tol
        i += 1
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
