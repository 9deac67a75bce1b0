package io.samstream.gpu.sam3;

import io.samstream.gpu.checkpoint.StateDict;
import io.samstream.gpu.cpu.Conv2d;
import io.samstream.gpu.cpu.CpuOps;
import io.samstream.gpu.cpu.CpuThreadPool;
import io.samstream.gpu.cpu.LayerNorm;
import io.samstream.gpu.cpu.Linear;
import java.util.List;

/**
 * SAM 3's geometry encoder ({@code SequenceGeometryEncoder} as {@code _create_geometry_encoder} builds it) for
 * exemplar boxes. Each box becomes the sum of its label embedding (positive or negative), a projection of its
 * (cx, cy, w, h), a 7 x 7 convolution of the image features pooled over it (RoI align on the layer-normed 1x
 * level) and a projection of its sine encoding (y, x, h, w). A class token follows the boxes (it alone when there
 * are none, as for a text prompt). The tokens are projected and normalized, then pass the encoder layers (self-
 * attention, cross-attention to the image tokens with their position on the keys) and a final norm.
 */
final class GeometryEncoder {
    static final String PREFIX = "geometry_encoder.";

    private final float[] labelEmbed;
    private final float[] cls;
    private final Linear direct;
    private final Conv2d pool;
    private final Linear posProject;
    private final Linear finalProj;
    private final LayerNorm norm;
    private final LayerNorm imgPreNorm;
    private final EncoderLayer[] layers;
    private final LayerNorm encodeNorm;
    private final int d;
    private final int roi;

    GeometryEncoder(StateDict sd, Sam3Config.Detector c) {
        int m = c.dModel();
        this.d = m;
        this.roi = c.roiSize();
        this.labelEmbed = sd.get(PREFIX + "label_embed.weight", 2, m).data();
        this.cls = sd.get(PREFIX + "cls_embed.weight", 1, m).data();
        this.direct = Linear.load(sd, PREFIX + "boxes_direct_project", 4, m);
        this.pool = Conv2d.load(sd, PREFIX + "boxes_pool_project", m, m, roi, 1, 0, true);
        this.posProject = Linear.load(sd, PREFIX + "boxes_pos_enc_project", m + 2, m);
        this.finalProj = Linear.load(sd, PREFIX + "final_proj", m, m);
        this.norm = LayerNorm.load(sd, PREFIX + "norm", m, Sam3Config.NORM_EPS);
        this.imgPreNorm = LayerNorm.load(sd, PREFIX + "img_pre_norm", m, Sam3Config.NORM_EPS);
        this.layers = new EncoderLayer[c.geometryLayers()];
        for (int i = 0; i < layers.length; i++) {
            layers[i] = new EncoderLayer(sd, PREFIX + "encode." + i + ".", m, c.heads(), c.geometryFfn(), false);
        }
        this.encodeNorm = LayerNorm.load(sd, PREFIX + "encode_norm", m, Sam3Config.NORM_EPS);
    }

    /** The geometry tokens [boxes + 1, d] (boxes, then the class token), none of them padding. */
    float[] encode(CpuThreadPool threads, List<ExemplarBox> boxes, VisionFeatures image) {
        int n = boxes.size();
        int g = image.grid();
        float[] tokens = new float[(n + 1) * d];
        if (n > 0) {
            float[] coords = new float[n * 4];
            for (int i = 0; i < n; i++) {
                ExemplarBox b = boxes.get(i);
                coords[4 * i] = b.cx();
                coords[4 * i + 1] = b.cy();
                coords[4 * i + 2] = b.w();
                coords[4 * i + 3] = b.h();
            }
            float[] directed = direct.forward(threads, coords, n);
            float[] normed = imgPreNorm.apply(threads, image.tokens().values(), g * g);
            float[] sines = new float[n * (d + 2)];
            for (int i = 0; i < n; i++) {
                ExemplarBox b = boxes.get(i);
                int o = i * (d + 2);
                SineEmbedding.encode(b.cy(), d / 2, sines, o);
                SineEmbedding.encode(b.cx(), d / 2, sines, o + d / 2);
                sines[o + d] = b.h();
                sines[o + d + 1] = b.w();
            }
            float[] pos = posProject.forward(threads, sines, n);
            for (int i = 0; i < n; i++) {
                ExemplarBox b = boxes.get(i);
                float x0 = (b.cx() - 0.5f * b.w()) * g;
                float y0 = (b.cy() - 0.5f * b.h()) * g;
                float x1 = (b.cx() + 0.5f * b.w()) * g;
                float y1 = (b.cy() + 0.5f * b.h()) * g;
                float[] pooled = pool.forward(threads, RoiAlign.pool(normed, g, g, d, x0, y0, x1, y1, roi), roi,
                        roi);
                int label = b.positive() ? 1 : 0;
                for (int ch = 0; ch < d; ch++) {
                    int k = i * d + ch;
                    tokens[k] = labelEmbed[label * d + ch] + ((directed[k] + pooled[ch]) + pos[k]);
                }
            }
        }
        System.arraycopy(cls, 0, tokens, n * d, d);
        float[] x = norm.apply(threads, finalProj.forward(threads, tokens, n + 1), n + 1);
        // every layer's cross-attention keys: the image tokens with their position, added once for all layers
        float[] imageTokens = image.tokens().values();
        float[] keys = CpuOps.add(imageTokens, image.pos(), g * g * d);
        for (EncoderLayer layer : layers) {
            layer.forward(threads, x, n + 1, null, null, imageTokens, keys, g * g, null);
        }
        encodeNorm.apply(threads, x, n + 1, x);
        return x;
    }
}
