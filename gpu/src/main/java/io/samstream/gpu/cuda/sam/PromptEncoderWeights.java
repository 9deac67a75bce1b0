package io.samstream.gpu.cuda.sam;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.CudaStream;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceMemoryPool;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.cuda.kernels.DecoderKernels;
import io.samstream.gpu.model.SamConfig;

/**
 * Meta's {@code PromptEncoder} on the GPU, as {@link CudaMaskDecoder} runs it: the Fourier features' Gaussian matrix,
 * the point / not-a-point / no-mask embeddings, the mask downscaler, and the dense positional embedding of the image
 * grid (made once, bf16).
 */
record PromptEncoderWeights(DeviceBuffer gauss, DeviceBuffer pointEmbed, DeviceBuffer notAPoint, DeviceBuffer noMask,
                            DecoderKernels.MaskDownscaler downscaler, DeviceBuffer densePe) {
    /**
     * Uploads the weights under {@code prompt_encoder.} and queues the dense positional embedding of the image grid
     * on {@code stream}, into a buffer of {@code pool}.
     */
    static PromptEncoderWeights load(DeviceWeights w, StateDict sd, SamConfig config, DeviceMemoryPool pool,
                                     DecoderKernels dk, CudaStream stream) {
        int c = config.promptDim(), mi = config.maskInChans(), e = config.embeddingSize(), t = e * e;
        String p = "prompt_encoder.";
        DeviceBuffer gauss = w.f32(sd.get(p + "pe_layer.positional_encoding_gaussian_matrix", 2, c / 2).data(),
                "pe gaussian");
        float[] pts = new float[4 * c];
        for (int i = 0; i < 4; i++) {
            System.arraycopy(sd.get(p + "point_embeddings." + i + ".weight", 1, c).data(), 0, pts, i * c, c);
        }
        DeviceBuffer pointEmbed = w.f32(pts, "point_embeddings");
        DeviceBuffer notAPoint = w.f32(sd.get(p + "not_a_point_embed.weight", 1, c).data(), "not_a_point_embed");
        DeviceBuffer noMask = w.f32(sd.get(p + "no_mask_embed.weight", 1, c).data(), "no_mask_embed");
        String md = p + "mask_downscaling.";
        DecoderKernels.MaskDownscaler downscaler = new DecoderKernels.MaskDownscaler(
                w.f32(sd.get(md + "0.weight", mi / 4, 1, 2, 2).data(), md + "0.weight"),
                w.f32(sd.get(md + "0.bias", mi / 4).data(), md + "0.bias"),
                w.f32(sd.get(md + "1.weight", mi / 4).data(), md + "1.weight"),
                w.f32(sd.get(md + "1.bias", mi / 4).data(), md + "1.bias"),
                w.f32(sd.get(md + "3.weight", mi, mi / 4, 2, 2).data(), md + "3.weight"),
                w.f32(sd.get(md + "3.bias", mi).data(), md + "3.bias"),
                w.f32(sd.get(md + "4.weight", mi).data(), md + "4.weight"),
                w.f32(sd.get(md + "4.bias", mi).data(), md + "4.bias"),
                w.f32(sd.get(md + "6.weight", c, mi, 1, 1).data(), md + "6.weight"),
                w.f32(sd.get(md + "6.bias", c).data(), md + "6.bias"));
        DeviceBuffer densePe = pool.allocateBf16((long) t * c, "dense pe");
        dk.densePe(stream, gauss, densePe, e, c);
        return new PromptEncoderWeights(gauss, pointEmbed, notAPoint, noMask, downscaler, densePe);
    }
}
