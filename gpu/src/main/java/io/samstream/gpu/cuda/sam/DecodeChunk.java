package io.samstream.gpu.cuda.sam;

import static io.samstream.gpu.cuda.sam.CudaMaskDecoder.MAX_IMAGES;
import static io.samstream.gpu.cuda.sam.CudaMaskDecoder.MAX_SPARSE;

import io.samstream.gpu.cuda.BumpAllocator;
import io.samstream.gpu.model.Prompt;
import io.samstream.gpu.model.SamBackend.DecodeRequest;
import io.samstream.gpu.tensor.Tensor;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One batch of a {@link CudaMaskDecoder#decodeWave}: prompt sets of one output mode and sparse-token count, from up to
 * {@value CudaMaskDecoder#MAX_IMAGES} images. {@link #plan} cuts a wave into them on the host, before any GPU work;
 * {@link #writePrompts} stages one batch's prompts.
 */
final class DecodeChunk {
    final boolean multimask;
    final int ns;
    /** (request, prompt) of each set, grouped by image in request order. */
    final List<int[]> sets = new ArrayList<>();
    /** The request of each image, and how many of the sets are its. */
    final List<Integer> images = new ArrayList<>();
    final List<Integer> perImage = new ArrayList<>();
    long inAt, outAt, logitsAt;
    int withMask;

    DecodeChunk(boolean multimask, int ns) {
        this.multimask = multimask;
        this.ns = ns;
    }

    /** Pinned input bytes: coords, codes, mask slots, mask planes, each 256-aligned. */
    static long inBytes(int sets, int ns, int withMask, int l) {
        return BumpAllocator.alignUp((long) sets * ns * 8) + BumpAllocator.alignUp((long) sets * ns * 4)
                + BumpAllocator.alignUp(sets * 4L) + BumpAllocator.alignUp((long) withMask * l * l * 4);
    }

    /** Pinned output bytes: the IoU predictions (the logits stay on the device). */
    static long outBytes(int sets, int mt) {
        return BumpAllocator.alignUp((long) sets * mt * 4);
    }

    /** Device bytes of the chunk's kept logits. */
    static long logitBytes(int sets, int count, int l) {
        return BumpAllocator.alignUp((long) sets * count * l * l * 4);
    }

    /**
     * The batches of a wave, every request checked first (its embedding's shape when it is a host tensor; each prompt
     * set present, of at most {@link CudaMaskDecoder#MAX_SPARSE} sparse tokens, its mask input {@code [1, L, L]}):
     * the sets of each (output mode, sparse-token count) in request order, cut at {@code maxSets} sets or
     * {@value CudaMaskDecoder#MAX_IMAGES} images; the groups in order of their first set.
     */
    static List<DecodeChunk> plan(List<DecodeRequest> requests, int maxSets, int c, int e, int l) {
        Map<List<Object>, List<DecodeChunk>> groups = new LinkedHashMap<>();
        for (int r = 0; r < requests.size(); r++) {
            DecodeRequest req = requests.get(r);
            if (!(req.embedding() instanceof EmbeddingRing.Slot)) {
                Tensor emb = req.embedding().toTensor();
                if (!emb.hasShape(1, c, e, e)) {
                    throw new IllegalArgumentException("embedding must be [1, " + c + ", " + e + ", " + e + "], got "
                            + emb.shapeString());
                }
            }
            for (int j = 0; j < req.prompts().size(); j++) {
                Prompt p = req.prompts().get(j);
                String which = "prompt set " + j + (requests.size() > 1 ? " of image " + r : "");
                if (p == null) {
                    throw new IllegalArgumentException(which + " is null");
                }
                int ns = sparseCount(p);
                if (ns > MAX_SPARSE) {
                    throw new IllegalArgumentException(which + " has " + ns + " sparse tokens (points, padding, box "
                            + "corners); the CUDA mask decoder takes at most " + MAX_SPARSE);
                }
                if (p.maskInput() != null && !p.maskInput().hasShape(1, l, l)) {
                    throw new IllegalArgumentException("mask input of " + which + " must be [1, " + l + ", " + l
                            + "], got " + p.maskInput().shapeString());
                }
                List<DecodeChunk> chunks = groups.computeIfAbsent(List.of(req.multimask(), ns), k -> new ArrayList<>());
                DecodeChunk ch = chunks.isEmpty() ? null : chunks.get(chunks.size() - 1);
                boolean newImage = ch == null || ch.images.get(ch.images.size() - 1) != r;
                if (ch == null || ch.sets.size() == maxSets || (newImage && ch.images.size() == MAX_IMAGES)) {
                    ch = new DecodeChunk(req.multimask(), ns);
                    chunks.add(ch);
                    newImage = true;
                }
                if (newImage) {
                    ch.images.add(r);
                    ch.perImage.add(0);
                }
                ch.perImage.set(ch.perImage.size() - 1, ch.perImage.get(ch.perImage.size() - 1) + 1);
                ch.sets.add(new int[] {r, j});
                if (p.maskInput() != null) {
                    ch.withMask++;
                }
            }
        }
        List<DecodeChunk> chunks = new ArrayList<>();
        groups.values().forEach(chunks::addAll);
        return chunks;
    }

    /** Number of sparse tokens of a prompt set, as the reference's prompt encoder makes them. */
    static int sparseCount(Prompt p) {
        int n = 0;
        if (p.points() != null) {
            n += p.pointCount() + (p.hasBox() ? 0 : 1);
        }
        return n + (p.hasBox() ? 2 : 0);
    }

    /**
     * Writes the batch's prompts, set after set, as the kernels read them: the sparse points' coordinates normalized
     * to the input size {@code size} ({@code cf}) and label codes ({@code ci}: -1 padding, 0 / 1 points, 2 / 3 box
     * corners, 4 any other label), each set's mask slot ({@code si}: -1 none) and the mask inputs ({@code mf}).
     *
     * @return how many sets have a mask input
     */
    int writePrompts(List<DecodeRequest> requests, float size, int l, FloatBuffer cf, IntBuffer ci, IntBuffer si,
                     FloatBuffer mf) {
        int masks = 0;   // the mask slots given so far
        for (int[] rj : sets) {
            Prompt p = requests.get(rj[0]).prompts().get(rj[1]);
            if (p.points() != null) {
                float[][] pts = p.points();
                int[] labels = p.labels();
                for (int i = 0; i < pts.length; i++) {
                    cf.put((pts[i][0] + 0.5f) / size).put((pts[i][1] + 0.5f) / size);
                    int lab = labels[i];
                    ci.put(lab == -1 || lab == 0 || lab == 1 ? lab : 4);
                }
                if (!p.hasBox()) {
                    cf.put(0f).put(0f);
                    ci.put(-1);
                }
            }
            if (p.hasBox()) {
                float[] b = p.box();
                cf.put((b[0] + 0.5f) / size).put((b[1] + 0.5f) / size).put((b[2] + 0.5f) / size)
                        .put((b[3] + 0.5f) / size);
                ci.put(2).put(3);
            }
            if (p.maskInput() != null) {
                mf.put(p.maskInput().data(), 0, l * l);
                si.put(masks++);
            } else {
                si.put(-1);
            }
        }
        return masks;
    }
}
