package io.samstream.stream.engine;

import io.samstream.gpu.image.FrameImage;
import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.model.DecoderOutput;
import io.samstream.gpu.model.EmbeddingMatcher;
import io.samstream.gpu.model.EmbeddingPool;
import io.samstream.gpu.model.ImageEmbedding;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend;
import io.samstream.gpu.model.SamConfig;
import io.samstream.gpu.tensor.Tensor;
import java.util.List;

/**
 * A SAM backend whose image encoder is one backend's and whose prompt side (decoder, appearance pooling, mask
 * post-processing) is another's: to tell which half of the CUDA backend an engine-level difference from the CPU
 * comes from.
 */
final class HybridBackend implements SamBackend {
    private final SamBackend encoder;
    private final SamBackend decoder;

    HybridBackend(SamBackend encoder, SamBackend decoder) {
        this.encoder = encoder;
        this.decoder = decoder;
    }

    @Override public SamConfig config() { return encoder.config(); }
    @Override public String name() { return "encoder " + encoder.name() + ", decoder " + decoder.name(); }
    @Override public boolean readsDeviceFrames() { return encoder.readsDeviceFrames(); }
    @Override public Tensor encode(Tensor images) { return encoder.encode(images); }
    @Override public Tensor encodeFrames(List<? extends FrameImage> frames) { return encoder.encodeFrames(frames); }
    @Override public List<ImageEmbedding> embedFrames(List<? extends FrameImage> frames) {
        return encoder.embedFrames(frames);
    }
    @Override public DecoderOutput decode(Tensor embedding, Prompt prompt, boolean multimask) {
        return decoder.decode(embedding, prompt, multimask);
    }
    @Override public List<DecoderOutput> decodeBatch(Tensor embedding, List<Prompt> prompts, boolean multimask) {
        return decoder.decodeBatch(embedding, prompts, multimask);
    }
    @Override public List<DecoderOutput> decodeBatch(ImageEmbedding embedding, List<Prompt> prompts, boolean multimask) {
        return decoder.decodeBatch(embedding, prompts, multimask);
    }
    @Override public List<List<DecoderOutput>> decodeWave(List<DecodeRequest> requests) {
        return decoder.decodeWave(requests);
    }
    @Override public List<float[]> poolEmbeddings(List<EmbeddingPool.Request> requests) {
        return decoder.poolEmbeddings(requests);
    }
    @Override public List<float[]> cellSimilarities(List<EmbeddingPool.CellRequest> requests) {
        return decoder.cellSimilarities(requests);
    }
    @Override public EmbeddingMatcher embeddingMatcher(int range) { return decoder.embeddingMatcher(range); }
    @Override public List<MaskSummary> postprocessMasks(Tensor lowRes, ImageSize resized, ImageSize original) {
        return decoder.postprocessMasks(lowRes, resized, original);
    }
    @Override public List<List<MaskSummary>> postprocessWave(List<MaskRequest> requests) {
        return decoder.postprocessWave(requests);
    }
}
