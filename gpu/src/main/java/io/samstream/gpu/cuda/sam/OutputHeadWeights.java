package io.samstream.gpu.cuda.sam;

import static io.samstream.gpu.cuda.kernels.WeightLayouts.convTransposeRows;
import static io.samstream.gpu.cuda.kernels.WeightLayouts.expandBias;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cuda.DeviceBuffer;
import io.samstream.gpu.cuda.DeviceWeights.Dense;
import io.samstream.gpu.cuda.DeviceWeights;
import io.samstream.gpu.model.SamConfig;

/**
 * What Meta's {@code MaskDecoder} has around the transformer, as {@link CudaMaskDecoder} runs it: the IoU and mask
 * tokens, the upscaler (two transposed convolutions as tap-major GEMM rows, bf16), one hypernetwork MLP per mask token
 * and the IoU head.
 */
record OutputHeadWeights(DeviceBuffer outTokens, DeviceBuffer up1W, DeviceBuffer up1B, DeviceBuffer upNormG,
                         DeviceBuffer upNormB, DeviceBuffer up2W, DeviceBuffer up2B, Dense[][] hyper, Dense[] iouHead) {
    /** Uploads the weights under {@code mask_decoder.} (the transformer's aside). */
    static OutputHeadWeights load(DeviceWeights w, StateDict sd, SamConfig config) {
        int c = config.promptDim(), mt = config.numMultimaskOutputs() + 1, co1 = c / 4, co2 = c / 8;
        int iouHidden = config.iouHeadHiddenDim(), iouDepth = config.iouHeadDepth();
        String d = "mask_decoder.";
        float[] ot = new float[(1 + mt) * c];
        System.arraycopy(sd.get(d + "iou_token.weight", 1, c).data(), 0, ot, 0, c);
        System.arraycopy(sd.get(d + "mask_tokens.weight", mt, c).data(), 0, ot, c, mt * c);
        DeviceBuffer outTokens = w.f32(ot, "output tokens");
        DeviceBuffer up1W = w.bf16(convTransposeRows(sd.get(d + "output_upscaling.0.weight", c, co1, 2, 2).data(), c,
                co1), "output_upscaling.0.weight");
        DeviceBuffer up1B = w.bf16(expandBias(sd.get(d + "output_upscaling.0.bias", co1).data()),
                "output_upscaling.0.bias");
        DeviceBuffer upNormG = w.bf16(sd.get(d + "output_upscaling.1.weight", co1).data(), "output_upscaling.1.weight");
        DeviceBuffer upNormB = w.bf16(sd.get(d + "output_upscaling.1.bias", co1).data(), "output_upscaling.1.bias");
        DeviceBuffer up2W = w.bf16(convTransposeRows(sd.get(d + "output_upscaling.3.weight", co1, co2, 2, 2).data(),
                co1, co2), "output_upscaling.3.weight");
        DeviceBuffer up2B = w.bf16(expandBias(sd.get(d + "output_upscaling.3.bias", co2).data()),
                "output_upscaling.3.bias");
        Dense[][] hyper = new Dense[mt][];
        for (int i = 0; i < mt; i++) {
            hyper[i] = w.mlp(sd, d + "output_hypernetworks_mlps." + i, c, c, co2, 3);
        }
        Dense[] iouHead = w.mlp(sd, d + "iou_prediction_head", c, iouHidden, mt, iouDepth);
        return new OutputHeadWeights(outTokens, up1W, up1B, upNormG, upNormB, up2W, up2B, hyper, iouHead);
    }
}
