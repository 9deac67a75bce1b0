#!/usr/bin/env python3
"""Checks that the wgmma shared-memory descriptors of the Hopper kernels read each element where it was written.

    python3 tools/wgmma_layout_check.py

The producers of gemm_sm90*.cuh and attention_sm90.cuh (cp.async, or TMA with CU_TENSOR_MAP_SWIZZLE_128B) write a
tile of rows of 64 bf16 (128 B) with the 128-byte swizzle: element (row r, column c) of a 1024-byte-aligned tile at
    r * 128 + ((c / 8) ^ (r % 8)) * 16 + (c % 8) * 2.
wgmma reads an operand through a descriptor (start address, leading / stride byte offsets, swizzle mode) and the
canonical layouts of the PTX ISA ("Shared Memory Matrix Layout", in elements, T = 8 bf16 per 16 bytes):
    K-major,  128B swizzle: ((8, m), (T, 2k)) : ((8T, SBO), (1, T))
    MN-major, 128B swizzle: ((T, 8, m), (8, k)) : ((1, T, LBO), (8T, SBO))
with the swizzle applied to the byte address (bits 4-6 ^= bits 7-9). For every element of every k16 step this
computes the address the descriptor makes the hardware read and compares it with the address of the element the
MMA needs there:
  - the GEMM's A and W tiles (K-major, 128 / 256 rows; hardware-proven since bench/results/2026-11-30-h200-wgmma.md:
    the control that this model reads the table as the hardware does),
  - attention_sm90's Q and K (K-major, S = Q K^T) and V (N-major B operand of O = P V: 8 keys x 64 d per
    1024-byte atom, SBO = 1024, 16 keys = 2048 B per k16 step),
  - sdpa_sm90's (head dim 256) Q, K as four 64-column blocks and V with the blocks as the leading byte offset.
"""

T = 8            # bf16 elements per 16 bytes
ROW = 128        # bytes per tile row


def written(base, r, c):
    return base + r * ROW + (((c >> 3) ^ (r & 7)) << 4) + (c & 7) * 2


def swizzle128(addr):
    return addr ^ (((addr >> 7) & 7) << 4)


def read_k_major(start, sbo, i, j):
    """Element (MN index i, K index j < 16) of a K-major operand."""
    i0, i1 = i % 8, i // 8
    j0, j1 = j % T, j // T
    off = i0 * 8 * T + i1 * (sbo // 2) + j0 + j1 * T
    return swizzle128(start + 2 * off)


def read_mn_major(start, lbo, sbo, i, j):
    """Element (MN index i, K index j < 16) of an MN-major operand."""
    i0, i1, i2 = i % T, (i // T) % 8, i // 64
    j0, j1 = j % 8, j // 8
    off = i0 + T * i1 + (lbo // 2) * i2 + 8 * T * j0 + (sbo // 2) * j1
    return swizzle128(start + 2 * off)


def check_k_major(name, base, rows, k_steps=4):
    for kk in range(k_steps):
        start = base + 32 * kk                       # the kernels add 2 (x 16 B) to the descriptor per k16 step
        for i in range(rows):
            for j in range(16):
                got, want = read_k_major(start, 1024, i, j), written(base, i, 16 * kk + j)
                assert got == want, f"{name}: k step {kk}, row {i}, k {j}: reads {got:#x}, element is at {want:#x}"
    print(f"ok  {name}: K-major, {rows} rows x 64 k, 4 k16 steps")


def check_v_n_major(name, base, keys=64, dims=64):
    for kk in range(keys // 16):
        start = base + 2048 * kk                     # the kernel adds 2048 >> 4 per k16 step
        for n in range(dims):
            for j in range(16):
                key = 16 * kk + j
                got, want = read_mn_major(start, 16, 1024, n, j), written(base, key, n)
                assert got == want, f"{name}: k step {kk}, d {n}, key {key}: reads {got:#x}, element is at {want:#x}"
    print(f"ok  {name}: N-major B (keys = K, d = N), {keys} keys x {dims} d, {keys // 16} k16 steps")


def written_blocks(base, r, c, block_bytes):
    """Element (row r, column c) of a row wider than 64 stored as 64-column blocks block_bytes apart (sdpa_sm90)."""
    return written(base + (c // 64) * block_bytes, r, c % 64)


def check_v_n256(name, base, keys=64, block_bytes=64 * 128):
    """sdpa_sm90's V at head dim 256: four 64-column blocks, the leading byte offset = the block stride."""
    for kk in range(keys // 16):
        start = base + 2048 * kk
        for n in range(256):
            for j in range(16):
                key = 16 * kk + j
                got = read_mn_major(start, block_bytes, 1024, n, j)
                want = written_blocks(base, key, n, block_bytes)
                assert got == want, f"{name}: k step {kk}, d {n}, key {key}: reads {got:#x}, element is at {want:#x}"
    print(f"ok  {name}: N-major B over 4 blocks (LBO {block_bytes}), {keys} keys x 256 d")


def check_k_major_blocks(name, base, rows, block_bytes, row0=0):
    """sdpa_sm90's Q / K at head dim 256: k16 step kk reads block kk / 4 at + 32 (kk % 4) bytes, from row row0."""
    for kk in range(16):
        start = base + (kk // 4) * block_bytes + row0 * 128 + 32 * (kk % 4)
        for i in range(rows):
            for j in range(16):
                got = read_k_major(start, 1024, i, j)
                want = written_blocks(base, row0 + i, 16 * kk + j, block_bytes)
                assert got == want, f"{name}: k step {kk}, row {i}, k {j}: reads {got:#x}, element is at {want:#x}"
    print(f"ok  {name}: K-major over 4 blocks, {rows} rows x 256 k, 16 k16 steps")


def main():
    base = 0x4000                                    # any 1024-byte-aligned tile
    check_k_major("gemm A (64 rows of a consumer warpgroup)", base, 64)
    check_k_major("gemm W (256 rows, the hardware-proven control)", base, 256)
    check_k_major("attention Q (64 rows of a consumer warpgroup)", base + 3 * 8192, 64)
    check_k_major("attention K (64 keys)", base, 64)
    check_v_n_major("attention V", base)
    check_k_major_blocks("sdpa_sm90 Q (the second consumer's 64 rows, blocks of 128 rows)", base, 64, 128 * 128, 64)
    check_k_major_blocks("sdpa_sm90 K (64 keys)", base, 64, 64 * 128)
    check_v_n256("sdpa_sm90 V", base)
    # A wrong stride byte offset must be caught (the check is not vacuous).
    try:
        for n in range(64):
            for j in range(16):
                assert read_mn_major(base, 16, 512, n, j) == written(base, j, n)
        raise SystemExit("the wrong SBO was not caught")
    except AssertionError:
        print("ok  a wrong stride byte offset for V is caught")


if __name__ == "__main__":
    main()
