package io.samstream.gpu.model;

import io.samstream.gpu.image.FrameImage;
import io.samstream.gpu.image.FramePreprocessor;
import io.samstream.gpu.image.ImageSize;
import io.samstream.gpu.image.MaskPostprocessor;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.mask.MaskSummary;
import io.samstream.gpu.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A way to run SAM: the CPU fp32 reference, or CUDA. {@link #encode} and {@link #decode} take model-ready
 * tensors; {@link #encodeFrames} and {@link #postprocessMasks} add the reference pre- and post-processing
 * (on the CPU by default, on the GPU in the CUDA backend). Coordinate transforms live in
 * {@code SamPredictor} and the engine's Segmenter.
 */
public interface SamBackend extends AutoCloseable {
    SamConfig config();

    /** A short name for logs, e.g. "cpu (8 threads)". */
    String name();

    /**
     * Whether {@link #embedFrames} reads YUV frames as they are: {@link io.samstream.gpu.image.DeviceYuvImage}
     * in place (GPU frames from a hardware decoder on the same GPU) and {@link io.samstream.gpu.image.HostYuvImage}
     * planes uploaded and converted on the device; a backend without it gets RGB ({@link
     * io.samstream.gpu.image.FrameImage#toRgb}).
     */
    default boolean readsDeviceFrames() {
        return false;
    }

    /**
     * Runs the image encoder.
     *
     * @param images normalized, padded images {@code [B, 3, S, S]}, S = {@link SamConfig#imageSize()}
     * @return image embeddings {@code [B, C, E, E]}, C = prompt dim, E = {@link SamConfig#embeddingSize()}
     */
    Tensor encode(Tensor images);

    /**
     * Pre-processes and encodes a batch of 8-bit RGB frames of any size: each resized so its longest side is
     * S (Pillow's antialiased bilinear), normalized with SAM's mean and std, zero-padded to S x S, then
     * {@link #encode}d. The default does the pre-processing on the CPU ({@link FramePreprocessor}); the CUDA
     * backend does it on the GPU from the uploaded bytes, with the same result.
     *
     * @return image embeddings {@code [B, C, E, E]}, one per frame, in order
     */
    default Tensor encodeFrames(List<? extends FrameImage> frames) {
        return encode(new FramePreprocessor(config().imageSize()).batch(frames));
    }

    /**
     * The embeddings of a batch of 8-bit RGB frames, one per frame, in order, each to be {@link
     * ImageEmbedding#close() closed} by its reader when done. The engine's way in: the CUDA backend leaves
     * them on the device (a slot of its embedding ring each, ready when the encoder's event fires; this call
     * waits for free slots when all are held, which bounds the frames in flight, and does not wait for the
     * GPU). The default splits {@link #encodeFrames} into host tensors.
     */
    default List<ImageEmbedding> embedFrames(List<? extends FrameImage> frames) {
        Tensor all = encodeFrames(frames);
        int[] shape = all.shape();
        int per = all.size() / frames.size();
        List<ImageEmbedding> out = new ArrayList<>(frames.size());
        for (int i = 0; i < frames.size(); i++) {
            out.add(ImageEmbedding.of(new Tensor(Arrays.copyOfRange(all.data(), i * per, (i + 1) * per), 1, shape[1],
                    shape[2], shape[3])));
        }
        return out;
    }

    /**
     * Post-processes low-res mask logits ({@code [..., L, L]}, e.g. {@code [N, L, L]}) of one frame: each plane
     * upscaled (bilinear to S x S, cropped to {@code resized}, bilinear to {@code original}), thresholded at 0,
     * and summarized (mask bits, area, box, stability score). The default runs on the CPU
     * ({@link MaskPostprocessor#summarize}); the CUDA backend runs it on the GPU, with the same result.
     *
     * @param resized  the frame's size after the longest-side resize (at most S x S)
     * @param original the frame's size
     * @return one summary per plane, in order
     */
    default List<MaskSummary> postprocessMasks(Tensor lowResLogits, ImageSize resized, ImageSize original) {
        return new MaskPostprocessor(config().imageSize()).summarize(lowResLogits, resized, original);
    }

    /**
     * Runs the prompt encoder and mask decoder for one image.
     *
     * @param embedding the image's embedding {@code [1, C, E, E]}
     * @param prompt    the prompt set, in model input coordinates
     * @param multimask true for the 3 multimask outputs, false for the single-mask output
     */
    DecoderOutput decode(Tensor embedding, Prompt prompt, boolean multimask);

    /**
     * Runs the prompt encoder and mask decoder for several prompt sets of one image (object tracks,
     * the point grid of automatic discovery). Backends that can batch (CUDA) override it; the default
     * decodes one prompt set after the other.
     *
     * @return one output per prompt set, in order
     */
    default List<DecoderOutput> decodeBatch(Tensor embedding, List<Prompt> prompts, boolean multimask) {
        List<DecoderOutput> out = new ArrayList<>(prompts.size());
        for (Prompt p : prompts) {
            out.add(decode(embedding, p, multimask));
        }
        return out;
    }

    /** {@link #decodeBatch(Tensor, List, boolean)} on an embedding wherever it is (CUDA: read in place). */
    default List<DecoderOutput> decodeBatch(ImageEmbedding embedding, List<Prompt> prompts, boolean multimask) {
        return decodeBatch(embedding.toTensor(), prompts, multimask);
    }

    /** Prompt sets to decode against one image: one request of a {@link #decodeWave}. */
    record DecodeRequest(ImageEmbedding embedding, List<Prompt> prompts, boolean multimask) {
        public DecodeRequest {
            if (embedding == null || prompts == null) {
                throw new IllegalArgumentException("a decode request needs an embedding and a list of prompts");
            }
            prompts = List.copyOf(prompts);
        }
    }

    /**
     * Several images' prompt sets at once: the engine's decoder gives it the objects of every stream's k-th
     * frame of a micro-batch (independent of each other), so that they share one batched decoder pass and
     * one wait instead of one per frame. The default decodes request after request.
     *
     * @return per request, one output per prompt set, in order
     */
    default List<List<DecoderOutput>> decodeWave(List<DecodeRequest> requests) {
        List<List<DecoderOutput>> out = new ArrayList<>(requests.size());
        for (DecodeRequest r : requests) {
            out.add(r.prompts().isEmpty() ? List.of() : decodeBatch(r.embedding(), r.prompts(), r.multimask()));
        }
        return out;
    }

    /**
     * Appearance means ({@link EmbeddingPool}): each request's embedding averaged under its weights, per channel;
     * null for all-zero weights. The tracker asks once per wave for every object of its frames. The
     * default pools on the host ({@link ImageEmbedding#toTensor}, once per embedding); the CUDA backend pools in
     * place on the device and brings back only the descriptors.
     */
    default List<float[]> poolEmbeddings(List<EmbeddingPool.Request> requests) {
        java.util.IdentityHashMap<ImageEmbedding, Tensor> host = new java.util.IdentityHashMap<>();
        List<float[]> out = new ArrayList<>(requests.size());
        for (EmbeddingPool.Request r : requests) {
            out.add(EmbeddingPool.pool(host.computeIfAbsent(r.embedding(), ImageEmbedding::toTensor), r.weights()));
        }
        return out;
    }

    /**
     * Appearance maps ({@link EmbeddingPool#cellSimilarity}): per request, the similarity to an object's remembered
     * look of the mean embedding of a window around every image cell, {@code [rows * cols]} row-major. The tracker asks for them when it searches for a
     * lost object. The default reads each embedding on the host ({@link ImageEmbedding#toTensor}, once per
     * embedding); the CUDA backend reads the ring's slots in place and brings back only the maps.
     */
    default List<float[]> cellSimilarities(List<EmbeddingPool.CellRequest> requests) {
        java.util.IdentityHashMap<ImageEmbedding, Tensor> host = new java.util.IdentityHashMap<>();
        List<float[]> out = new ArrayList<>(requests.size());
        for (EmbeddingPool.CellRequest r : requests) {
            out.add(EmbeddingPool.cellSimilarity(host.computeIfAbsent(r.embedding(), ImageEmbedding::toTensor),
                    r.look(), r.mean(), r.cols(), r.rows(), r.windowCols(), r.windowRows()));
        }
        return out;
    }

    /**
     * A matcher of one stream's successive embeddings ({@link EmbeddingMatcher}: the tracker's camera motion), for
     * shifts of up to {@code range} cells. The default reads the embeddings on the host ({@link
     * HostEmbeddingMatcher}); the CUDA backend matches the ring's slots in place.
     */
    default EmbeddingMatcher embeddingMatcher(int range) {
        return new HostEmbeddingMatcher(range);
    }

    /**
     * One frame's chosen masks and its geometry: one request of {@link #postprocessWave}. Each plane is read
     * where its output lies (the CUDA backend reads the decoder's device logits in place).
     */
    record MaskRequest(List<DecoderOutput.Plane> planes, ImageSize resized, ImageSize original) {
        public MaskRequest {
            planes = List.copyOf(planes);
            if (resized == null || original == null) {
                throw new IllegalArgumentException("a mask request needs the resized and original sizes");
            }
        }

        /** Host logits {@code [N, L, L]}: N planes. */
        public MaskRequest(Tensor lowResLogits, ImageSize resized, ImageSize original) {
            this(hostPlanes(lowResLogits), resized, original);
        }

        private static List<DecoderOutput.Plane> hostPlanes(Tensor lowResLogits) {
            if (lowResLogits.rank() < 2 || lowResLogits.dim(-1) == 0 || lowResLogits.dim(-2) == 0) {
                throw new IllegalArgumentException("low-res logits need non-empty planes [..., L, L], got "
                        + lowResLogits.shapeString());
            }
            int planes = lowResLogits.size() / (lowResLogits.dim(-1) * lowResLogits.dim(-2));
            return new DecoderOutput(lowResLogits, new float[planes]).planes();
        }

        /** The planes' logits stacked on the host, {@code [N, L, L]} (bringing kept logits over). */
        public Tensor lowResLogits() {
            if (planes.isEmpty()) {
                throw new IllegalStateException("a mask request without planes has no logits");
            }
            if (planes.size() == 1) {
                return planes.get(0).toTensor();
            }
            Tensor first = planes.get(0).toTensor();
            int h = first.dim(-2);
            int w = first.dim(-1);
            float[] stacked = new float[planes.size() * h * w];
            for (int i = 0; i < planes.size(); i++) {
                Tensor p = i == 0 ? first : planes.get(i).toTensor();
                if (p.dim(-2) != h || p.dim(-1) != w) {
                    throw new IllegalArgumentException("a mask request mixes " + h + "x" + w + " and " + p.dim(-2) + "x"
                            + p.dim(-1) + " logit planes");
                }
                System.arraycopy(p.data(), 0, stacked, i * h * w, h * w);
            }
            return new Tensor(stacked, planes.size(), h, w);
        }
    }

    /**
     * {@link #postprocessMasks} for several frames (of any sizes) at once: on the GPU one upload, the launches,
     * one download and one wait for all of them. The default runs them one after the other.
     *
     * @return per request, one summary per plane, in order
     */
    default List<List<MaskSummary>> postprocessWave(List<MaskRequest> requests) {
        List<List<MaskSummary>> out = new ArrayList<>(requests.size());
        for (MaskRequest r : requests) {
            out.add(postprocessMasks(r.lowResLogits(), r.resized(), r.original()));
        }
        return out;
    }

    @Override
    default void close() {}
}
