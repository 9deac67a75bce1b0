package io.samstream.gpu.cuda.sam;

import static io.samstream.gpu.cuda.sam.CudaMaskDecoder.MAX_IMAGES;
import static io.samstream.gpu.cuda.sam.CudaMaskDecoder.MAX_SPARSE;

import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.model.SamConfig;

/**
 * The device memory of {@link CudaMaskDecoder} for {@code maxSets} prompt sets: token rows (sets x (1 + mask tokens +
 * {@link CudaMaskDecoder#MAX_SPARSE})), image elements and the wide buffer's, the mask logits, the activation buffers'
 * bytes in allocation order, and the pool's bytes (those and the weights).
 */
record MaskDecoderSizes(long rowsTok, long imgElems, long wideElems, long outMasks, long[] act, long poolBytes) {
    static MaskDecoderSizes of(SamConfig config, int maxSets) {
        int c = config.promptDim(), e = config.embeddingSize(), t = e * e, l = config.lowResSize();
        int internal = c / config.attentionDownsample(), mlp = config.decoderMlpDim();
        int mt = config.numMultimaskOutputs() + 1, iouHidden = config.iouHeadHiddenDim(), co2 = c / 8;
        int nqMax = 1 + mt + MAX_SPARSE;
        long s = maxSets;
        long rowsTok = s * nqMax;
        long imgElems = s * t * c;
        long wideElems = s * t * Math.max(3L * internal, 2L * c);
        long outMasks = s * Math.max(1, mt - 1) * l * l;
        long[] act = {MAX_IMAGES * c * (long) t * 4, s * l * l * 4, s * 4, s * MAX_SPARSE * 8, s * MAX_SPARSE * 4,
                rowsTok * c * 4 * 7, rowsTok * Math.max(mlp, c) * 4, 2 * s * Math.max(c, iouHidden) * 4,
                (long) mt * s * co2 * 4, s * mt * 4, imgElems * 2 * 2, wideElems * 2, outMasks * 4};
        long total = 64L * 256;   // alignment of the buffers allocated from one entry below
        for (long a : act) {
            total += BumpAllocator.alignUp(Math.max(a, 1));
        }
        return new MaskDecoderSizes(rowsTok, imgElems, wideElems, outMasks, act, total + weightBytesBound(config));
    }

    /** An upper bound of the weight bytes (each tensor 256-aligned, fp32). */
    private static long weightBytesBound(SamConfig c) {
        long dim = c.promptDim(), e = c.embeddingSize(), mlp = c.decoderMlpDim(), h = c.iouHeadHiddenDim();
        long perLayer = 16 * dim * dim + 2 * dim * mlp + 64 * dim + mlp;
        long w = c.decoderDepth() * perLayer + 8 * dim * dim + e * e * dim + 16 * dim * dim
                + (c.numMultimaskOutputs() + 1) * (3 * dim * dim) + 3 * h * h + 4 * h * dim
                + 4 * c.maskInChans() * c.maskInChans() + 2 * dim * c.maskInChans() + 64 * dim;
        return w * 4 + 512L * 256;
    }
}
