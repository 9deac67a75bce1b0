package io.samstream.gpu.cuda.sam3;

import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.cuda.kernels.Sam2Kernels;
import io.samstream.gpu.cuda.sam2.CudaSam2MaskDecoder;
import io.samstream.gpu.sam2.Sam2Config;
import io.samstream.gpu.sam2.Sam2Shapes;
import io.samstream.gpu.sam3.Sam3TrackerConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What {@link CudaSam3Tracker} holds for a tracker configuration, decided before any GPU work: the memory tokens a
 * frame reads at most, whether the kernels can run the configuration, and the device pool its parts, buffers and
 * memory bank take.
 */
final class TrackerSizes {
    /** Pool bytes beyond the estimate of the parts' weights and activations. */
    static final long SPARE_BYTES = 64L << 20;

    private TrackerSizes() {}

    /**
     * Memory tokens the attention holds: what {@code MemoryPicker} can give a frame,
     * {@link Sam3TrackerConfig#MAX_CONDITIONING_FRAMES} conditioning memories and {@code numMaskmem - 1} tracked ones,
     * with the pointers of the conditioning frames and of up to {@link Sam3TrackerConfig#MAX_OBJECT_POINTERS} - 1
     * tracked ones.
     */
    static int maxMemory(Sam3TrackerConfig c) {
        int conditioning = Sam3TrackerConfig.MAX_CONDITIONING_FRAMES;
        return maxSpatial(c) * c.grid() * c.grid()
                + (conditioning + Sam3TrackerConfig.MAX_OBJECT_POINTERS - 1) * (c.hidden() / c.memDim());
    }

    /** Spatial memories a frame reads at most: the conditioning ones and {@code numMaskmem - 1} tracked ones. */
    static int maxSpatial(Sam3TrackerConfig c) {
        return Sam3TrackerConfig.MAX_CONDITIONING_FRAMES + c.numMaskmem() - 1;
    }

    /**
     * What the kernels cannot run in {@code c}, one line each (none for Meta's release): the mask decoder's limits
     * ({@link CudaSam2MaskDecoder#unsupported}); the GEMMs' widths in multiples of 8; the memory attention's head dim
     * a multiple of 8 up to 256; the memory encoder's 3x3 stride-2 downsampler of 4 stages (16 x grid down to the
     * grid) and an odd fuser kernel.
     */
    static List<String> unsupported(Sam3TrackerConfig c) {
        List<String> problems = new ArrayList<>();
        Sam2Config parts = c.sam2Parts();
        String decoder = CudaSam2MaskDecoder.unsupported(parts);
        if (decoder != null) {
            problems.add("mask decoder: " + decoder);
        }
        if (c.memDim() < 1 || c.memDim() % 8 != 0 || c.memAttnFfn() % 8 != 0) {
            problems.add("memory width " + c.memDim() + " / feed-forward " + c.memAttnFfn() + " (multiples of 8)");
        } else if (c.hidden() % c.memDim() != 0) {
            problems.add("hidden width " + c.hidden() + " (a multiple of the memory width " + c.memDim()
                    + ": the pointers' tokens)");
        }
        int heads = parts.layout().memAttnHeads();
        int hd = heads < 1 ? 0 : c.hidden() / heads;
        if (hd < 1 || c.hidden() % heads != 0 || hd % 8 != 0 || Sam2Kernels.sdpaCeiling(hd) < 0) {
            problems.add("memory attention head dim " + c.hidden() + "/" + heads + " (a multiple of 8 up to 256)");
        }
        if (c.downsampleKernel() != 3 || (1 << c.downsampleLayers()) != 16) {
            problems.add("mask downsampler of " + c.downsampleLayers() + " stages of " + c.downsampleKernel() + "x"
                    + c.downsampleKernel() + " (4 stages of 3x3: the mask at 16 x grid down to the grid)");
        }
        if (c.fuserKernel() % 2 != 1) {
            problems.add("memory fuser kernel " + c.fuserKernel() + " (odd)");
        }
        return problems;
    }

    /** {@link #unsupported} as an {@link IllegalArgumentException} naming every problem; nothing when there is none. */
    static void checkSupported(Sam3TrackerConfig c) {
        List<String> problems = unsupported(c);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("the CUDA SAM 3 tracker cannot run " + c + ": "
                    + String.join("; ", problems));
        }
    }

    /**
     * The pool: the decoder's ({@link CudaSam2MaskDecoder#poolBytes}); the memory attention's and encoder's weights
     * (bounded at 4 bytes a value, each tensor 256-byte aligned) and tables; their activations at batch 1 over
     * {@link #maxMemory} tokens; the tracker's inputs (a frame's low-resolution masks among them); the bank of
     * {@code slots} memories, the positions by temporal slot and the copy table; the frame features' ({@link
     * TrackerFeatures#poolBytes}); and {@link #SPARE_BYTES}.
     */
    static long poolBytes(Sam3TrackerConfig c, int slots) {
        Sam2Config parts = c.sam2Parts();
        long tokens = (long) c.grid() * c.grid(), h = c.hidden(), md = c.memDim(), s = c.maskSize();
        long mem = maxMemory(c);
        int heads = parts.layout().memAttnHeads();
        long weights = 0;
        for (Map<String, int[]> part : List.of(Sam2Shapes.memoryAttention(parts), Sam2Shapes.memoryEncoder(parts))) {
            for (int[] shape : part.values()) {
                long n = 1;
                for (int d : shape) {
                    n *= d;
                }
                weights += align(n * 4);
            }
        }
        long tables = tokens * h * 4 + tokens * h * 2;                           // rope cos + sin, 0.1 x position
        long attention = tokens * (8 * h + c.memAttnFfn()) * 2 + mem * (md + 2 * h) * 2
                + Sam2Kernels.splitScratchBytes(1, heads, (int) tokens, (int) h / heads, Sam2Kernels.MAX_SPLITS);
        // two fp32 and two bf16 mask-sized buffers, im2col rows (9/4 of a mask in bf16); the downsampled mask (4^L
        // channels), x, its depthwise output, the 4x-wide hidden rows and the output at the grid
        long downChannels = 1L << (2 * c.downsampleLayers());
        long encoder = s * s * (4 + 4 + 2 + 2 + 5) + tokens * (downChannels + 6 * h + md) * 2;
        // top, s0, s1, a mask prompt; memory, pos; mask
        long inputs = tokens * h * (2 + 4 + 2 + 2) + 2 * mem * md * 2 + s * s * 4;
        long l = c.lowResSize();                                  // a frame's low-res masks and their shrinkage areas
        inputs += Sam2Kernels.SHRINK_MAX_OBJECTS * (l * l * 4 + 2 * 4);
        long feature = tokens * md * 2;
        long bank = (Math.max(1, slots) + c.numMaskmem()) * feature + 2L * maxSpatial(c) * Sam2Kernels.SPAN_BYTES;
        long allocations = 64 * 256;
        return CudaSam2MaskDecoder.poolBytes(parts, 1) + weights + tables + attention + encoder + inputs + bank
                + TrackerFeatures.poolBytes(c) + allocations + SPARE_BYTES;
    }

    private static long align(long bytes) {
        return BumpAllocator.alignUp(Math.max(bytes, 1));
    }
}
