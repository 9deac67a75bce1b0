package io.samstream.gpu.sam2;

import io.samstream.gpu.image.PillowBilinearResize;
import io.samstream.gpu.image.RgbImage;
import io.samstream.gpu.predict.Prediction;
import io.samstream.gpu.predict.PromptSet;
import io.samstream.gpu.tensor.Tensor;

/**
 * SAM 2.1 on single images, as Meta's {@code SAM2ImagePredictor} does it: the image resized to the model's
 * square input (no aspect ratio kept, no padding), normalized, encoded once; per prompt set the points and
 * box scaled to the input (x * S / width, y * S / height), the box's corners (labels 2, 3) before the
 * points, decoded against the features plus no_mem_embed with no memory; the low-resolution logits clamped
 * to [-32, 32] and resized bilinearly to the original size, then thresholded at 0.
 *
 * <p>One difference: the resize to S x S is Pillow's antialiased bilinear on the 8-bit image
 * ({@link PillowBilinearResize}), where SAM2Transforms resizes the float image (torchvision, antialiased):
 * the model input differs by the rounding to 8 bits.
 */
public final class Sam2ImagePredictor {
    private final Sam2Model model;
    private FrameFeatures features;
    private int width;
    private int height;

    public Sam2ImagePredictor(Sam2Model model) {
        this.model = model;
    }

    /** Encodes the image; prompt sets are then decoded against it. */
    public void setImage(RgbImage image) {
        int s = model.config().imageSize();
        RgbImage square = PillowBilinearResize.resize(image, s, s);
        features = model.encodeImage(model.normalize(square.rgb()));
        width = image.width();
        height = image.height();
    }

    /** The masks of one prompt set (original pixels), as {@code SAM2ImagePredictor.predict} returns them. */
    public Prediction predict(PromptSet set) {
        if (features == null) {
            throw new IllegalStateException("no image: call setImage first");
        }
        set.validate(width, height);
        int s = model.config().imageSize();
        int boxPoints = set.box() == null ? 0 : 2;
        int n = boxPoints + set.pointCount();
        float[][] pts = new float[n][];
        int[] labels = new int[n];
        double sx = (double) s / width;
        double sy = (double) s / height;
        if (set.box() != null) {
            double[] b = set.box();
            pts[0] = new float[] {(float) (b[0] * sx), (float) (b[1] * sy)};
            pts[1] = new float[] {(float) (b[2] * sx), (float) (b[3] * sy)};
            labels[0] = 2;
            labels[1] = 3;
        }
        for (int i = 0; i < set.pointCount(); i++) {
            double[] p = set.points()[i];
            pts[boxPoints + i] = new float[] {(float) (p[0] * sx), (float) (p[1] * sy)};
            labels[boxPoints + i] = set.labels()[i];
        }
        Sam2MaskDecoder.Output out = model.decodeImage(features, pts, labels, set.multimask());
        int l = model.config().lowResSize();
        int count = out.masks().length;
        boolean[][] masks = new boolean[count][];
        float[] lowRes = new float[count * l * l];
        for (int m = 0; m < count; m++) {
            float[] logits = out.masks()[m].clone();
            for (int i = 0; i < logits.length; i++) {
                logits[i] = Math.max(-32f, Math.min(32f, logits[i]));
            }
            System.arraycopy(logits, 0, lowRes, m * l * l, l * l);
            float[] up = Resampling.bilinear(logits, l, l, height, width);
            boolean[] mask = new boolean[up.length];
            for (int i = 0; i < up.length; i++) {
                mask[i] = up[i] > 0;
            }
            masks[m] = mask;
        }
        return new Prediction(masks, width, height, out.ious().clone(), new Tensor(lowRes, count, l, l));
    }
}
