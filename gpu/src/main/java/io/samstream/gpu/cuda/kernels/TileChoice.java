package io.samstream.gpu.cuda.kernels;

/**
 * The one place tile sizes are chosen, for the dense and the 2:4 GEMMs alike (what each launcher makes of the
 * choice: {@link GemmKernels#defaultTile(int, int, int, boolean)}, {@link SparseGemmKernels#defaultTile(int, int, int,
 * boolean)}). Measurements behind the rules: bench/results/README.md.
 */
final class TileChoice {
    private TileChoice() {}

    /**
     * @param narrow   128-column tiles rather than 256: they fill the GPU's waves clearly better (one CTA per SM
     *                 either way: small grids such as M = 4096, N = 2304 at batch 1)
     * @param pingPong consumers that take whole tiles in turn (K < 2048 without GELU): the cooperative tile's epilogue
     *                 would stall the tensor cores for a large share of a short mainloop, while GELU makes the
     *                 ping-pong epilogue as long as the other warpgroup's mainloop and long K evens them out
     */
    record Choice(boolean narrow, boolean pingPong) {}

    /** The tile shape for {@code c[m,n] = a[m,k] · wᵀ} with or without GELU on a GPU of {@code sms} SMs. */
    static Choice choose(int m, int n, int k, boolean gelu, int sms) {
        long rows = (m + 127) / 128;
        long wide = rows * ((n + 255) / 256), narrow = rows * ((n + 127) / 128);
        // Time ~ waves x tile work; a 128-wide tile does half the work of a 256-wide one, at ~15% less efficiency.
        double wideCost = Math.ceil((double) wide / sms) * 2.0, narrowCost = Math.ceil((double) narrow / sms) * 1.15;
        return new Choice(narrowCost < wideCost, !gelu && k < 2048);
    }
}
